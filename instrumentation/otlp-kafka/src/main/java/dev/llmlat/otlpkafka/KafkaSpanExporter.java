package dev.llmlat.otlpkafka;

import dev.llmlat.otlpkafka.internal.KafkaSender;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Writes spans to Kafka as the OpenTelemetry Collector's kafka exporter does with {@code encoding:
 * otlp_proto} and {@code partition_traces_by_id: true}: one {@code ExportTraceServiceRequest} per
 * trace, keyed by the trace id (32 lowercase hex).
 *
 * <p>{@link #export} only splits the batch by trace and enqueues it; it never waits for Kafka. A
 * single sender thread encodes and hands records to the Kafka producer. When the queue is full the
 * trace is dropped and counted ({@link #stats()}, periodic log lines, and the {@code
 * llmlat.exporter.kafka.*} metrics).
 */
public final class KafkaSpanExporter implements SpanExporter {
  private static final List<KafkaSpanExporter> LIVE = new CopyOnWriteArrayList<>();

  private final KafkaSender sender;

  KafkaSpanExporter(KafkaSender sender) {
    this.sender = sender;
    LIVE.add(this);
  }

  public static KafkaSpanExporterBuilder builder() {
    return new KafkaSpanExporterBuilder();
  }

  /** The exporters not shut down yet (the metrics read their counters). */
  static List<KafkaSpanExporter> live() {
    return LIVE;
  }

  @Override
  public CompletableResultCode export(Collection<SpanData> spans) {
    if (sender.isShutdown()) {
      return CompletableResultCode.ofFailure();
    }
    // Split by trace, keeping order: one record per trace, like partition_traces_by_id.
    Map<String, List<SpanData>> byTrace = new LinkedHashMap<>();
    for (SpanData span : spans) {
      byTrace.computeIfAbsent(span.getTraceId(), id -> new ArrayList<>(4)).add(span);
    }
    for (Map.Entry<String, List<SpanData>> trace : byTrace.entrySet()) {
      sender.offer(trace.getKey(), trace.getValue());
    }
    // Accepted or counted as dropped: the batch span processor has nothing to retry.
    return CompletableResultCode.ofSuccess();
  }

  @Override
  public CompletableResultCode flush() {
    return sender.flush();
  }

  @Override
  public CompletableResultCode shutdown() {
    LIVE.remove(this);
    return sender.shutdown();
  }

  public ExporterStats stats() {
    return sender.stats();
  }

  @Override
  public String toString() {
    return "KafkaSpanExporter{" + sender + "}";
  }
}
