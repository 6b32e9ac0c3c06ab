package dev.llmlat.otlpkafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The exporter with no broker at its address: export never waits, every span is accounted for. */
class KafkaSpanExporterTest {

  /** Collects what the SDK would export, so the test can hand it to the exporter in one batch. */
  static final class Capture implements SpanExporter {
    final List<SpanData> spans = new ArrayList<>();

    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
      spans.addAll(batch);
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
  }

  @Test
  void exportReturnsAtOnceAndCountsDropsWhenTheBrokerIsDown() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    Capture capture = new Capture();
    try (SdkTracerProvider tracing =
        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(capture)).build()) {
      Tracer tracer = tracing.get("test");
      for (int trace = 0; trace < 10; trace++) {
        Span root = tracer.spanBuilder("root").startSpan();
        tracer.spanBuilder("child").setParent(Context.root().with(root)).startSpan().end();
        root.end();
      }
    }
    assertThat(capture.spans).hasSize(20);

    KafkaSpanExporter exporter =
        KafkaSpanExporter.builder()
            .setBootstrapServers("127.0.0.1:" + closedPort)
            .setQueueCapacity(3)
            .setMaxBlock(Duration.ofSeconds(2))
            // the wait for a broker that never answered is the delivery timeout: short here
            .putProducerProperty("request.timeout.ms", 1000)
            .putProducerProperty("delivery.timeout.ms", 3000)
            .build();
    try {
      CompletableResultCode exported = exporter.export(capture.spans);
      // export() only queues: it has answered while no send has yet failed (each fails after
      // max.block)
      ExporterStats atReturn = exporter.stats();
      assertThat(exported.isDone() && exported.isSuccess()).isTrue();
      assertThat(atReturn.spansDroppedSendFailed())
          .as("export() must not wait for Kafka: %s", atReturn)
          .isZero();

      // 10 traces, 3 fit in the queue: at least 7 traces (14 spans) refused at once
      assertThat(exporter.stats().spansDroppedQueueFull()).isGreaterThanOrEqualTo(14);
      // the queued traces fail once the start-up wait is over, one max.block after another; the
      // deadline only guards against a hang
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (exporter.stats().spansDropped() < 20 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      ExporterStats stats = exporter.stats();
      assertThat(stats.spansDropped()).as("every span accounted for: %s", stats).isEqualTo(20);
      assertThat(stats.spansDroppedSendFailed())
          .as("queued traces failed on max.block")
          .isPositive();
      assertThat(stats.spansSent()).isZero();
    } finally {
      assertThat(exporter.shutdown().join(15, TimeUnit.SECONDS).isSuccess()).isTrue();
    }
    assertThat(exporter.export(capture.spans).isSuccess()).as("after shutdown").isFalse();
  }
}
