package dev.llmlat.enginetelemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class EngineTelemetryTest {
  private static final AttributeKey<String> LAYER = AttributeKey.stringKey("llmlat.layer");
  private static final AttributeKey<String> SERVICE = AttributeKey.stringKey("service.name");

  @Test
  void engineAndGpuSpansCarryTheirLayerAndShareOneExporterThatClosesOnce() {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    try (EngineTelemetry telemetry =
        EngineTelemetry.builder("engine-a").setExporter(exporter).build()) {
      telemetry.engine().getTracer("scheduler").spanBuilder("llm_request").startSpan().end();
      telemetry.gpuTracer("gpu").spanBuilder("step").startSpan().end();
      assertThat(telemetry.flush(Duration.ofSeconds(10))).isTrue();

      Map<String, SpanData> byName =
          exporter.getFinishedSpanItems().stream()
              .collect(Collectors.toMap(SpanData::getName, s -> s));
      assertThat(byName.get("llm_request").getResource().getAttribute(LAYER)).isEqualTo("engine");
      assertThat(byName.get("step").getResource().getAttribute(LAYER)).isEqualTo("gpu");
      assertThat(byName.get("step").getResource().getAttribute(SERVICE)).isEqualTo("engine-a");
    }
    assertThat(exporter.export(java.util.List.of()).isSuccess())
        .as("shut down by close()")
        .isFalse();
  }

  @Test
  void closeExportsWhatBothLayersStillHoldBeforeTheExporterShutsDown() {
    java.util.List<String> exported = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.concurrent.atomic.AtomicInteger shutdowns =
        new java.util.concurrent.atomic.AtomicInteger();
    io.opentelemetry.sdk.trace.export.SpanExporter recording =
        new io.opentelemetry.sdk.trace.export.SpanExporter() {
          @Override
          public io.opentelemetry.sdk.common.CompletableResultCode export(
              java.util.Collection<SpanData> spans) {
            if (shutdowns.get() > 0) {
              return io.opentelemetry.sdk.common.CompletableResultCode.ofFailure();
            }
            spans.forEach(s -> exported.add(s.getName()));
            return io.opentelemetry.sdk.common.CompletableResultCode.ofSuccess();
          }

          @Override
          public io.opentelemetry.sdk.common.CompletableResultCode flush() {
            return io.opentelemetry.sdk.common.CompletableResultCode.ofSuccess();
          }

          @Override
          public io.opentelemetry.sdk.common.CompletableResultCode shutdown() {
            shutdowns.incrementAndGet();
            return io.opentelemetry.sdk.common.CompletableResultCode.ofSuccess();
          }
        };
    EngineTelemetry telemetry =
        EngineTelemetry.builder("engine-a")
            .setExporter(recording)
            .setScheduleDelay(Duration.ofHours(1))
            .build();
    telemetry.engine().getTracer("scheduler").spanBuilder("llm_request").startSpan().end();
    telemetry.gpuTracer("gpu").spanBuilder("step").startSpan().end();
    telemetry.close();
    // one provider's shutdown must not close the shared exporter under the other's last export
    assertThat(exported).containsExactlyInAnyOrder("llm_request", "step");
    assertThat(shutdowns.get()).isEqualTo(1);
  }

  @Test
  void settingsAreCheckedWhereTheyAreGiven() {
    assertThatThrownBy(() -> EngineTelemetry.builder(" ")).hasMessageContaining("service name");
    assertThatThrownBy(() -> EngineTelemetry.builder("e").build()).hasMessageContaining("exporter");
    assertThatThrownBy(() -> EngineTelemetry.builder("e").setMaxQueueSize(0))
        .hasMessageContaining("queue");
  }
}
