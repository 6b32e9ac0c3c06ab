package dev.llmlat.bench;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.retention.Retention;
import dev.llmlat.retention.RetentionPolicy;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Stored bytes per request before and after retention decided by attribution, on synthetic
 * three-layer requests (gateway, engine, GPU) attributed in the same run; both sides measured after
 * merging the parts, so the figure is what the store keeps, not what a merge has yet to drop.
 */
public final class RetentionBenchmark {
  private final int requests;
  private final RetentionPolicy policy;
  private final Path scratch;
  private final Path engineLibrary;

  public RetentionBenchmark(
      int requests, RetentionPolicy policy, Path scratch, Path engineLibrary) {
    if (requests < 100) {
      throw new IllegalArgumentException("--requests must be at least 100");
    }
    this.requests = requests;
    this.policy = policy;
    this.scratch = scratch;
    this.engineLibrary = engineLibrary;
  }

  public void run(PrintWriter out) throws IOException {
    Files.createDirectories(scratch);
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(scratch.resolve("clickhouse"), engineLibrary)) {
      SchemaMigrator.bundled().migrate(store);
      long base = 1_795_946_400_000_000_000L;
      long spans = AnalyzeBenchmark.load(store, requests, base, 7);
      new Analyzer(store).analyze(0, Long.MAX_VALUE / 2, true);
      merge(store);
      long before = Retention.bytes(store);
      long t0 = System.nanoTime();
      Retention.Outcome o =
          Retention.apply(store, policy, base + policy.olderThan().toNanos() + 3_600_000_000_000L);
      double seconds = (System.nanoTime() - t0) / 1e9;
      merge(store);
      long after = Retention.bytes(store);
      long kept = o.keptByReason().values().stream().mapToLong(Long::longValue).sum();
      out.printf(
          "store: %,d requests, %,d spans; policy: over %.0f ms, slowest %.1f%%, sample %.1f%%%n",
          requests,
          spans,
          policy.sloTtftNs() / 1e6,
          100 * policy.keepSlowest(),
          100 * policy.keepRate());
      out.printf(
          "kept %,d traces (%s), deleted %,d, in %.2f s (%,.0f requests decided/s)%n",
          kept, o.keptByReason(), o.deletedTraces(), seconds, o.decided() / seconds);
      out.printf(
          "stored bytes per request (spans, kernels, trace index): %,d before, %,d after retention; ratio %.3f%n",
          before / requests, after / requests, after / (double) before);
      out.flush();
    } finally {
      dev.llmlat.services.ChildJvm.deleteRecursively(scratch);
    }
  }

  private static void merge(EmbeddedClickHouse store) {
    for (String t : new String[] {"otel_traces", "gpu_kernels", "otel_traces_trace_id_ts"}) {
      store.execute("OPTIMIZE TABLE " + t + " FINAL");
    }
  }
}
