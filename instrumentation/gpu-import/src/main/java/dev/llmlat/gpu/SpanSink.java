package dev.llmlat.gpu;

import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

/**
 * Receives the spans of an import, one bounded batch at a time ({@link ImportOptions#batchSize()}
 * spans at most). A batch is exactly what the {@code otlp_spans} Kafka topic carries, so a sink may
 * write {@code batch.toByteArray()} as a record value unchanged.
 */
@FunctionalInterface
public interface SpanSink {
  void accept(ExportTraceServiceRequest batch);
}
