package dev.llmlat.engine;

import dev.llmlat.scheduler.LayerResources;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.logging.LoggingSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.TimeUnit;

/**
 * Two tracer providers over one exporter: the scheduler's ({@code llmlat.layer=engine}) and the
 * modelled GPU's ({@code llmlat.layer=gpu}); the layer is a resource attribute, so each needs its
 * own provider. Each has a bounded {@link BatchSpanProcessor}: the scheduler thread never waits on
 * export.
 */
final class EngineTelemetry implements AutoCloseable {
  private final SpanExporter exporter;
  private final OpenTelemetrySdk engine;
  private final SdkTracerProvider gpu;

  private EngineTelemetry(String serviceName, SpanExporter exporter) {
    this.exporter = exporter;
    SpanExporter shared = new Unclosable(exporter);
    this.engine = OpenTelemetrySdk.builder()
        .setTracerProvider(provider(LayerResources.engine(serviceName), shared))
        .build();
    this.gpu = provider(LayerResources.of(serviceName, LlmlatAttributes.LAYER_GPU), shared);
  }

  static EngineTelemetry create(EngineConfig config, SpanExporter exporter) {
    return new EngineTelemetry(config.serviceName(), exporter);
  }

  /** The exporter the configuration names. */
  static SpanExporter exporterFor(EngineConfig config) {
    switch (config.exporter()) {
      case KAFKA:
        return KafkaSpanExporter.create(config.kafkaBootstrap(), config.topic(), config.kafkaProperties());
      case LOGGING:
        return LoggingSpanExporter.create();
      default:
        return new Unclosable(null);
    }
  }

  OpenTelemetry engine() {
    return engine;
  }

  Tracer gpuTracer() {
    return gpu.get("dev.llmlat.engine.gpu", "0.1.0");
  }

  /** Exports everything ended so far; true when done within the timeout. */
  boolean flush(Duration timeout) {
    CompletableResultCode a = engine.getSdkTracerProvider().forceFlush();
    CompletableResultCode b = gpu.forceFlush();
    return CompletableResultCode.ofAll(java.util.List.of(a, b)).join(timeout.toMillis(), TimeUnit.MILLISECONDS).isSuccess();
  }

  @Override
  public void close() {
    engine.getSdkTracerProvider().shutdown().join(10, TimeUnit.SECONDS);
    gpu.shutdown().join(10, TimeUnit.SECONDS);
    exporter.shutdown().join(10, TimeUnit.SECONDS);
  }

  private static SdkTracerProvider provider(io.opentelemetry.sdk.resources.Resource resource, SpanExporter exporter) {
    return SdkTracerProvider.builder()
        .setResource(resource)
        .addSpanProcessor(BatchSpanProcessor.builder(exporter)
            .setMaxQueueSize(16_384)
            .setMaxExportBatchSize(1_024)
            .setScheduleDelay(Duration.ofMillis(200))
            .build())
        .build();
  }

  /** Shared by both providers: each provider's shutdown must not close it under the other. Null: drop. */
  private static final class Unclosable implements SpanExporter {
    private final SpanExporter delegate;

    Unclosable(SpanExporter delegate) {
      this.delegate = delegate;
    }

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
      return delegate == null ? CompletableResultCode.ofSuccess() : delegate.export(spans);
    }

    @Override
    public CompletableResultCode flush() {
      return delegate == null ? CompletableResultCode.ofSuccess() : delegate.flush();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }
}
