package dev.llmlat.otlpkafka;

/**
 * Receives spans one bounded batch at a time (an importer's batch size, the eBPF bridge's flush),
 * already split into the per-trace records the span topic carries.
 */
@FunctionalInterface
public interface SpanSink {
  void accept(SpanBatch batch);
}
