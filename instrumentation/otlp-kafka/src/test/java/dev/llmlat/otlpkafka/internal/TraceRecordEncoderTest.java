package dev.llmlat.otlpkafka.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sender's reusable encoder writes exactly the bytes of the SDK's plain OTLP marshaler. */
class TraceRecordEncoderTest {

  @Test
  void reusingEncoderMatchesThePlainMarshalerRecordAfterRecord() {
    List<SpanData> ended = new ArrayList<>();
    SpanExporter capture = new SpanExporter() {
      @Override
      public CompletableResultCode export(Collection<SpanData> batch) {
        ended.addAll(batch);
        return CompletableResultCode.ofSuccess();
      }

      @Override
      public CompletableResultCode flush() {
        return CompletableResultCode.ofSuccess();
      }

      @Override
      public CompletableResultCode shutdown() {
        return CompletableResultCode.ofSuccess();
      }
    };
    try (SdkTracerProvider tracing = SdkTracerProvider.builder()
        .setResource(Resource.getDefault().merge(Resource.create(Attributes.of(AttributeKey.stringKey("service.name"), "gw"))))
        .addSpanProcessor(SimpleSpanProcessor.create(capture)).build()) {
      Tracer tracer = tracing.get("test", "1.0");
      for (int trace = 0; trace < 5; trace++) {
        Span root = tracer.spanBuilder("POST /v1/chat/completions").startSpan();
        root.setAttribute("gen_ai.request.model", "m" + trace);
        root.setAttribute("llmlat.gateway.chunks", 8L + trace);
        root.addEvent("llmlat.first_chunk");
        tracer.spanBuilder("POST").setParent(Context.root().with(root)).startSpan().end();
        root.end();
      }
    }
    TraceRecordEncoder encoder = new TraceRecordEncoder();
    for (int trace = 0; trace < 5; trace++) {
      List<SpanData> spans = ended.subList(trace * 2, trace * 2 + 2);
      assertThat(encoder.encodeReusing(spans)).isEqualTo(TraceRecordEncoder.encode(spans));
    }
    assertThat(encoder.encodeReusing(ended)).isEqualTo(TraceRecordEncoder.encode(ended));
  }
}
