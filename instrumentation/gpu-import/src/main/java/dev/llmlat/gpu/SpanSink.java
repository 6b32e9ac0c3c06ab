package dev.llmlat.gpu;

/**
 * Receives the spans of an import, one bounded batch at a time ({@link ImportOptions#batchSize()}
 * spans at most), already split into the per-trace records the {@code otlp_spans} topic carries.
 */
@FunctionalInterface
public interface SpanSink {
  void accept(SpanBatch batch);
}
