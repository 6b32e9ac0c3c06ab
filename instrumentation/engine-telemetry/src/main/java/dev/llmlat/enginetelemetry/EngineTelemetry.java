package dev.llmlat.enginetelemetry;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The OpenTelemetry SDK set up for an engine that has none: two tracer providers over one exporter,
 * the scheduler's ({@code llmlat.layer=engine}, for {@code SchedulerTracer}) and the GPU's ({@code
 * llmlat.layer=gpu}, for steps an engine times on the device itself). The layer is a resource
 * attribute, so each layer needs its own provider. Each has a bounded {@link BatchSpanProcessor}:
 * the scheduler thread never waits on export; spans past the queue are dropped and counted by the
 * SDK.
 *
 * <pre>{@code
 * EngineTelemetry telemetry = EngineTelemetry.builder("my-engine")
 *     .setExporter(KafkaSpanExporter.builder().setBootstrapServers("kafka:9092").build())
 *     .build();
 * SchedulerTracer tracer = SchedulerTracer.builder(telemetry.engine()).build();
 * }</pre>
 */
public final class EngineTelemetry implements AutoCloseable {
  private final SpanExporter exporter;
  private final OpenTelemetrySdk engine;
  private final SdkTracerProvider gpu;

  private EngineTelemetry(Builder builder) {
    this.exporter = builder.exporter;
    SpanExporter shared = new Unclosable(exporter);
    this.engine =
        OpenTelemetrySdk.builder()
            .setTracerProvider(
                provider(LayerResources.engine(builder.serviceName), shared, builder))
            .build();
    this.gpu =
        provider(
            LayerResources.of(builder.serviceName, LlmlatAttributes.LAYER_GPU), shared, builder);
  }

  public static Builder builder(String serviceName) {
    return new Builder(serviceName);
  }

  /** The engine layer's OpenTelemetry, for the scheduler SDK. */
  public OpenTelemetry engine() {
    return engine;
  }

  /** A tracer of the GPU layer. */
  public Tracer gpuTracer(String instrumentationName) {
    return gpu.get(instrumentationName);
  }

  /** Exports everything ended so far; true when done within the timeout. */
  public boolean flush(Duration timeout) {
    CompletableResultCode a = engine.getSdkTracerProvider().forceFlush();
    CompletableResultCode b = gpu.forceFlush();
    return CompletableResultCode.ofAll(List.of(a, b))
        .join(timeout.toMillis(), TimeUnit.MILLISECONDS)
        .isSuccess();
  }

  /** Ends both providers (exporting what they hold), then the exporter. */
  @Override
  public void close() {
    engine.getSdkTracerProvider().shutdown().join(10, TimeUnit.SECONDS);
    gpu.shutdown().join(10, TimeUnit.SECONDS);
    exporter.shutdown().join(10, TimeUnit.SECONDS);
  }

  private static SdkTracerProvider provider(
      Resource resource, SpanExporter exporter, Builder settings) {
    return SdkTracerProvider.builder()
        .setResource(resource)
        .addSpanProcessor(
            BatchSpanProcessor.builder(exporter)
                .setMaxQueueSize(settings.maxQueueSize)
                .setMaxExportBatchSize(Math.min(1_024, settings.maxQueueSize))
                .setScheduleDelay(settings.scheduleDelay)
                .build())
        .build();
  }

  /** The set-up, validated at {@link #build()}. */
  public static final class Builder {
    private final String serviceName;
    private SpanExporter exporter;
    private int maxQueueSize = 16_384;
    private Duration scheduleDelay = Duration.ofMillis(200);

    private Builder(String serviceName) {
      if (serviceName == null || serviceName.isBlank()) {
        throw new IllegalArgumentException("service name is required");
      }
      this.serviceName = serviceName;
    }

    /**
     * Where spans go, e.g. otlp-kafka's {@code KafkaSpanExporter}; closed with the telemetry.
     * Required.
     */
    public Builder setExporter(SpanExporter exporter) {
      this.exporter = Objects.requireNonNull(exporter, "exporter");
      return this;
    }

    /**
     * Spans each layer holds for export at most (default 16384); more are dropped, never waited
     * for.
     */
    public Builder setMaxQueueSize(int maxQueueSize) {
      if (maxQueueSize < 1) {
        throw new IllegalArgumentException("max queue size must be positive: " + maxQueueSize);
      }
      this.maxQueueSize = maxQueueSize;
      return this;
    }

    /** How long ended spans may wait before an export (default 200 ms). */
    public Builder setScheduleDelay(Duration scheduleDelay) {
      if (scheduleDelay == null || scheduleDelay.isNegative()) {
        throw new IllegalArgumentException("schedule delay must be zero or more: " + scheduleDelay);
      }
      this.scheduleDelay = scheduleDelay;
      return this;
    }

    public EngineTelemetry build() {
      if (exporter == null) {
        throw new IllegalStateException("an exporter is required (setExporter)");
      }
      return new EngineTelemetry(this);
    }
  }

  /** Shared by both providers: each provider's shutdown must not close it under the other. */
  private static final class Unclosable implements SpanExporter {
    private final SpanExporter delegate;

    Unclosable(SpanExporter delegate) {
      this.delegate = delegate;
    }

    @Override
    public CompletableResultCode export(Collection<SpanData> spans) {
      return delegate.export(spans);
    }

    @Override
    public CompletableResultCode flush() {
      return delegate.flush();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }
}
