package dev.llmlat.otlpkafka.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sender's records are exactly the bytes the SDK's OTLP exporter writes for their spans. */
class TraceRecordEncoderTest {

  @Test
  void recordsAreTheSdkExportersBytesOfTheirTrace() throws IOException {
    List<SpanData> ended = new ArrayList<>();
    SpanExporter capture =
        new SpanExporter() {
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
    try (SdkTracerProvider tracing =
        SdkTracerProvider.builder()
            .setResource(
                Resource.getDefault()
                    .merge(
                        Resource.create(
                            Attributes.of(AttributeKey.stringKey("service.name"), "gw"))))
            .addSpanProcessor(SimpleSpanProcessor.create(capture))
            .build()) {
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
    for (int trace = 0; trace < 5; trace++) {
      List<SpanData> spans = ended.subList(trace * 2, trace * 2 + 2);
      String model = "m" + trace;
      byte[] record = TraceRecordEncoder.encode(spans);
      assertThat(record).isEqualTo(sdkBytes(spans));
      ExportTraceServiceRequest decoded = ExportTraceServiceRequest.parseFrom(record);
      assertThat(decoded.getResourceSpansCount()).isEqualTo(1);
      assertThat(decoded.getResourceSpans(0).getScopeSpans(0).getSpansList())
          .extracting(s -> s.getName())
          .containsExactlyInAnyOrder("POST /v1/chat/completions", "POST");
      assertThat(decoded.getResourceSpans(0).getScopeSpans(0).getSpansList())
          .flatExtracting(s -> s.getAttributesList())
          .anySatisfy(kv -> assertThat(kv.getValue().getStringValue()).isEqualTo(model));
    }
    assertThat(TraceRecordEncoder.encode(ended)).isEqualTo(sdkBytes(ended));
  }

  /** What the SDK's OTLP exporter writes for these spans, through its own stream. */
  private static byte[] sdkBytes(Collection<SpanData> spans) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    TraceRequestMarshaler.create(spans).writeBinaryTo(out);
    return out.toByteArray();
  }
}
