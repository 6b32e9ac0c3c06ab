package dev.llmlat.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.ServedRequests;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Retention on a real store: 150 requests two hours old (two models) and 20 recent ones, imported
 * and attributed. What must be kept is read here from the attribution rows: over the 45 ms
 * objective, the slowest 5% per model (type-7 quantile computed here), and the sample of the rest;
 * one old trace that nobody keeps is given a step span serving a kept request, so it must stay too.
 */
class RetentionTest {
  static final long MS = 1_000_000L;
  static final long HOUR = 3_600_000_000_000L;
  static final long BASE = 1_795_970_300_000_000_000L;
  static final long SLO = 45 * MS;
  static final double SLOWEST = 0.05;
  static final double RATE = 0.1;

  @TempDir Path dir;

  private static Map<String, Long> spansPerTrace(EmbeddedClickHouse store) {
    Map<String, Long> out = new HashMap<>();
    store
        .query("SELECT TraceId, count() FROM otel_traces GROUP BY TraceId")
        .rows()
        .forEach(r -> out.put(r.get(0), Long.parseLong(r.get(1))));
    return out;
  }

  /** Type-7 quantile of sorted values. */
  private static double quantile(List<Long> sorted, double q) {
    double h = (sorted.size() - 1) * q;
    int lo = (int) Math.floor(h);
    int hi = Math.min(sorted.size() - 1, lo + 1);
    return sorted.get(lo) + (h - lo) * (sorted.get(hi) - sorted.get(lo));
  }

  @Test
  void keepsEverySpanOfTheRequestsWorthKeepingAndDeletesTheRest() throws Exception {
    List<ServedRequests.Request> old =
        new ArrayList<>(ServedRequests.generate(11, 100, BASE, 50 * MS, 0, 0.1, Map.of()));
    old.addAll(
        ServedRequests.generate(12, 50, BASE + 7 * 1_000_000_000L, 50 * MS, 10 * MS, 0.1, Map.of())
            .stream()
            .map(r -> r.withModel("Qwen/Qwen3-8B"))
            .toList());
    List<ServedRequests.Request> recent =
        ServedRequests.generate(13, 20, BASE + 2 * HOUR, 50 * MS, 0, 0.1, Map.of());
    List<ServedRequests.Request> all = new ArrayList<>(old);
    all.addAll(recent);
    Path file = dir.resolve("spans.otlp.jsonl");
    Files.write(file, ServedRequests.otlpJson(all));
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      try (StoreImportTarget target = new StoreImportTarget(store)) {
        GpuImporter.importFile(file, ExportFormat.OTLP_JSON, ImportOptions.defaults(), target);
        target.commit();
      }
      assertThat(new Analyzer(store).analyze(0, Long.MAX_VALUE / 2, true).written())
          .isEqualTo(all.size());

      // what must be kept, from the attribution rows
      Map<String, List<Long>> byModel = new HashMap<>();
      Map<String, long[]> rows = new HashMap<>(); // trace -> ttft
      Map<String, String> model = new HashMap<>();
      for (List<String> r :
          store.query("SELECT TraceId, Model, TtftNs FROM llm_request_attribution FINAL").rows()) {
        byModel.computeIfAbsent(r.get(1), k -> new ArrayList<>()).add(Long.parseLong(r.get(2)));
        rows.put(r.get(0), new long[] {Long.parseLong(r.get(2))});
        model.put(r.get(0), r.get(1));
      }
      byModel.values().forEach(java.util.Collections::sort);
      Set<String> sampled =
          new HashSet<>(
              store
                  .query(
                      "SELECT TraceId FROM llm_request_attribution FINAL"
                          + " WHERE cityHash64(TraceId) % 1000000 < "
                          + Math.round(RATE * 1e6))
                  .column("TraceId"));
      Set<String> oldIds =
          new HashSet<>(old.stream().map(ServedRequests.Request::traceId).toList());
      Set<String> keep = new HashSet<>();
      for (String t : oldIds) {
        long ttft = rows.get(t)[0];
        if (ttft > SLO
            || ttft >= quantile(byModel.get(model.get(t)), 1 - SLOWEST)
            || sampled.contains(t)) {
          keep.add(t);
        }
      }
      assertThat(keep).hasSizeBetween(10, 140); // the scenario keeps some and deletes some
      String served = keep.iterator().next();
      String holder = oldIds.stream().filter(t -> !keep.contains(t)).findFirst().orElseThrow();
      store.execute(
          "INSERT INTO otel_traces (Timestamp, TraceId, SpanId, SpanName, ServiceName, `Links.TraceId`, `Links.SpanId`,"
              + " `Links.TraceState`, `Links.Attributes`) VALUES (fromUnixTimestamp64Nano("
              + (BASE + 10 * MS)
              + "), '"
              + holder
              + "', '00000000000000ff', 'step', 'llm-engine', ['"
              + served
              + "'], [''], [''], [map()])");
      keep.add(holder);
      Map<String, Long> before = spansPerTrace(store);
      long bytesBefore = Retention.bytes(store);

      RetentionPolicy policy = new RetentionPolicy(Duration.ofHours(1), SLO, SLOWEST, RATE);
      Retention.Outcome outcome =
          Retention.apply(store, policy, BASE + 2 * HOUR + 10 * 60_000_000_000L);
      Map<String, Long> after = spansPerTrace(store);
      for (String t : oldIds) {
        assertThat(after.getOrDefault(t, 0L))
            .as(t + (keep.contains(t) ? " kept" : " deleted"))
            .isEqualTo(keep.contains(t) ? before.get(t) : 0L);
      }
      recent.forEach(
          r ->
              assertThat(after.get(r.traceId()))
                  .as("recent " + r.traceId())
                  .isEqualTo(before.get(r.traceId())));
      assertThat(
              store
                  .query(
                      "SELECT Reason FROM llmlat_kept_traces FINAL WHERE TraceId = '"
                          + holder
                          + "'")
                  .column("Reason"))
          .containsExactly(Retention.SERVES);
      assertThat(store.query("SELECT count() FROM llm_request_attribution FINAL").single())
          .isEqualTo(String.valueOf(all.size()));
      assertThat(outcome.decided()).isEqualTo(old.size());
      assertThat(outcome.deletedTraces()).isEqualTo(old.size() - keep.size());
      assertThat(outcome.spansAfter()).isLessThan(outcome.spansBefore());
      assertThat(outcome.bytesBefore()).isEqualTo(bytesBefore);

      // again: nothing more to decide or delete
      Retention.Outcome again =
          Retention.apply(store, policy, BASE + 2 * HOUR + 10 * 60_000_000_000L);
      assertThat(again.decided()).isZero();
      assertThat(spansPerTrace(store)).isEqualTo(after);
    }
  }

  @Test
  void aPolicyOutsideItsBoundsIsNamed() {
    assertThatThrownBy(() -> new RetentionPolicy(Duration.ZERO, SLO, 0.01, 0.1))
        .hasMessageContaining("retention age");
    assertThatThrownBy(() -> new RetentionPolicy(Duration.ofHours(1), SLO, 1.5, 0.1))
        .hasMessageContaining("slowest share");
    assertThatThrownBy(() -> new RetentionPolicy(Duration.ofHours(1), SLO, 0.01, -0.1))
        .hasMessageContaining("sample rate");
  }
}
