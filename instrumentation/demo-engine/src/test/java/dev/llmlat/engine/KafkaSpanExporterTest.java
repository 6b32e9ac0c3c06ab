package dev.llmlat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.scheduler.LayerResources;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

class KafkaSpanExporterTest {
  private static final String T1 = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String T2 = "0af7651916cd43dd8448eb211c80319c";

  @Test
  void writesOneOtlpRecordPerTraceKeyedByTraceId() throws Exception {
    InMemorySpanExporter memory = InMemorySpanExporter.create();
    List<SpanData> finished;
    try (SdkTracerProvider provider = SdkTracerProvider.builder().setResource(LayerResources.engine("svc"))
        .addSpanProcessor(SimpleSpanProcessor.create(memory)).build()) {
      Tracer tracer = provider.get("scope-a", "1.2");
      for (String trace : List.of(T1, T2, T1)) {
        SpanContext remote = SpanContext.createFromRemoteParent(trace, "00f067aa0ba902b7", TraceFlags.fromByte((byte) 3),
            TraceState.builder().put("vendor", "x").build());
        Span span = tracer.spanBuilder("llm_request").setParent(Context.root().with(Span.wrap(remote)))
            .setAttribute(AttributeKey.longArrayKey("llmlat.decode.token_deltas_ns"), List.of(5L, 7L))
            .addLink(SpanContext.create(T2, "1111111111111111", TraceFlags.getSampled(), TraceState.getDefault()),
                Attributes.of(AttributeKey.longKey("llmlat.step.decode_tokens"), 1L))
            .startSpan();
        span.addEvent("llmlat.first_token");
        span.end();
      }
      finished = memory.getFinishedSpanItems(); // closing the provider clears the in-memory exporter
    }
    MockProducer<String, byte[]> producer = new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
    KafkaSpanExporter exporter = new KafkaSpanExporter(producer, "otlp_spans");
    CompletableResultCode result = exporter.export(finished);
    assertThat(result.join(5, TimeUnit.SECONDS).isSuccess()).isTrue();

    List<ProducerRecord<String, byte[]>> records = producer.history();
    assertThat(records).extracting(ProducerRecord::key).containsExactly(T1, T2);
    assertThat(records).allSatisfy(r -> assertThat(r.topic()).isEqualTo("otlp_spans"));
    ExportTraceServiceRequest first = ExportTraceServiceRequest.parseFrom(records.get(0).value());
    ResourceSpans rs = first.getResourceSpans(0);
    assertThat(rs.getResource().getAttributesList()).extracting(KeyValue::getKey).contains("llmlat.layer", "service.name");
    assertThat(value(rs.getResource().getAttributesList(), "llmlat.layer")).isEqualTo("engine");
    assertThat(rs.getScopeSpans(0).getScope().getName()).isEqualTo("scope-a");
    assertThat(rs.getScopeSpans(0).getScope().getVersion()).isEqualTo("1.2");
    List<io.opentelemetry.proto.trace.v1.Span> spans = rs.getScopeSpans(0).getSpansList();
    assertThat(spans).hasSize(2).allSatisfy(s -> {
      assertThat(HexFormat.of().formatHex(s.getTraceId().toByteArray())).isEqualTo(T1);
      assertThat(HexFormat.of().formatHex(s.getParentSpanId().toByteArray())).isEqualTo("00f067aa0ba902b7");
      assertThat(s.getKind()).isEqualTo(io.opentelemetry.proto.trace.v1.Span.SpanKind.SPAN_KIND_INTERNAL);
      assertThat(s.getFlags() & 0x300).isEqualTo(0x300); // parent is remote
      assertThat(s.getTraceState()).isEqualTo("vendor=x");
      assertThat(s.getEventsList()).extracting(e -> e.getName()).containsExactly("llmlat.first_token");
      assertThat(s.getLinks(0).getAttributes(0).getValue().getIntValue()).isEqualTo(1);
      assertThat(s.getAttributes(0).getValue().getArrayValue().getValuesList()).extracting(v -> v.getIntValue()).containsExactly(5L, 7L);
      assertThat(s.getEndTimeUnixNano()).isGreaterThanOrEqualTo(s.getStartTimeUnixNano());
    });
    assertThat(exporter.recordsSent()).isEqualTo(2);
    exporter.shutdown();
    assertThat(producer.closed()).isTrue();
    assertThat(exporter.export(finished).isSuccess()).isFalse();
  }

  @Test
  void failedSendsFailTheExportWithoutThrowing() {
    MockProducer<String, byte[]> producer = new MockProducer<>(false, null, new StringSerializer(), new ByteArraySerializer());
    KafkaSpanExporter exporter = new KafkaSpanExporter(producer, "otlp_spans");
    InMemorySpanExporter memory = InMemorySpanExporter.create();
    List<SpanData> finished;
    try (SdkTracerProvider provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(memory)).build()) {
      provider.get("x").spanBuilder("s").startSpan().end();
      finished = memory.getFinishedSpanItems();
    }
    CompletableResultCode result = exporter.export(finished);
    assertThat(result.isDone()).isFalse(); // export does not wait for the broker
    producer.errorNext(new org.apache.kafka.common.errors.TimeoutException("broker down"));
    assertThat(result.join(5, TimeUnit.SECONDS).isSuccess()).isFalse();
    assertThat(exporter.recordsFailed()).isEqualTo(1);
  }

  private static String value(List<KeyValue> attributes, String key) {
    return attributes.stream().filter(kv -> kv.getKey().equals(key)).findFirst().orElseThrow().getValue().getStringValue();
  }
}
