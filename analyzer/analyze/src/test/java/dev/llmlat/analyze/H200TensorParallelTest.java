package dev.llmlat.analyze;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.attribution.TraceAttribution;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tensor-parallel H200 capture of ../shared/traces/h200x2-tp (TP=2, one process per rank, an
 * NCCL all-reduce twice per layer): the Nsight export imported as it is, the engine's
 * requests.jsonl as engine spans (first token from the capture, decode tokens at the end of its
 * decode steps on the later rank), then attributed. The truth is plain SQL over tp.sqlite: kernels
 * joined to their rank's NVTX range through the launching runtime call, the k-th all-reduce of a
 * step on each rank matched, each rank's wait the latest start minus its own, summed over the
 * request's prefill step on each rank.
 */
class H200TensorParallelTest {
  @TempDir Path dir;

  record Step(String kind, List<String> traces, long end) {}

  /**
   * Per request: the longest wait of a rank in its prefill's all-reduces, and the device the others
   * waited for.
   */
  record Truth(long waitNs, long lateDevice) {}

  static final String WAITS =
      """
      WITH ranges AS (
        SELECT n.globalTid AS tid, n.start AS rs, n."end" AS re, n.text AS text,
               ROW_NUMBER() OVER (PARTITION BY n.globalTid, n.text ORDER BY n.start) AS occ
        FROM NVTX_EVENTS n WHERE n.text LIKE 'prefill %'),
      coll AS (
        SELECT r.text, r.occ, k.deviceId AS device, k.start AS ks,
               ROW_NUMBER() OVER (PARTITION BY r.tid, r.text, r.occ ORDER BY k.start) AS kth
        FROM ranges r
        JOIN CUPTI_ACTIVITY_KIND_RUNTIME c ON c.globalTid = r.tid AND c.start >= r.rs AND c.start <= r.re
        JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = c.correlationId
          AND k.globalPid = (c.globalTid / 16777216) * 16777216
        JOIN StringIds s ON s.id = k.shortName
        WHERE s.value LIKE 'ncclDevKernel_AllReduce%')
      SELECT substr(text, 9) AS trace, device, SUM(latest - ks) AS wait
      FROM (SELECT *, MAX(ks) OVER (PARTITION BY text, occ, kth) AS latest FROM coll)
      GROUP BY text, device ORDER BY text, device""";

  @Test
  void theWaitForALateRankIsAComponentAndNamesTheRank() throws Exception {
    Path root = dev.llmlat.sharedtraces.SharedTraces.resolve("h200x2-tp");
    Map<String, Truth> truth = new HashMap<>();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + root.resolve("tp.sqlite"));
        ResultSet rs = c.createStatement().executeQuery(WAITS)) {
      Map<String, long[]> byDevice = new HashMap<>();
      while (rs.next()) {
        byDevice.computeIfAbsent(rs.getString(1), k -> new long[2])[rs.getInt(2)] = rs.getLong(3);
      }
      // two ranks: one waits for the other, whose own wait is (about) none
      byDevice.forEach(
          (t, w) -> truth.put(t, new Truth(Math.max(w[0], w[1]), w[0] >= w[1] ? 1 : 0)));
    }
    // step ends on the later rank (the host's cudaEvent log of each rank)
    Map<Integer, Step> steps = new java.util.TreeMap<>();
    for (String rank : List.of("rank0", "rank1")) {
      for (String line : Files.readAllLines(root.resolve("cuda_events." + rank + ".jsonl"))) {
        JsonNode s = H200TinyLmTest.JSON.readTree(line);
        List<String> traces = new ArrayList<>();
        s.get("trace_ids").forEach(t -> traces.add(t.asText()));
        long end =
            s.get("host_submit_unix_ns").asLong()
                + Math.round(s.get("gpu_elapsed_ms").asDouble() * 1e6);
        steps.merge(
            s.get("step").asInt(),
            new Step(s.get("kind").asText(), traces, end),
            (a, b) -> a.end() >= b.end() ? a : b);
      }
    }
    List<JsonNode> requests = new ArrayList<>();
    StringBuilder lines = new StringBuilder();
    for (String line : Files.readAllLines(root.resolve("requests.jsonl"))) {
      JsonNode r = H200TinyLmTest.JSON.readTree(line);
      requests.add(r);
      String t = r.get("trace_id").asText();
      long firstToken = r.get("first_token_ns").asLong();
      List<Step> decodes =
          steps.values().stream()
              .filter(s -> s.kind().equals("decode") && s.traces().contains(t))
              .toList();
      ObjectNode doc = H200TinyLmTest.JSON.createObjectNode();
      ObjectNode rs = doc.putArray("resourceSpans").addObject();
      ArrayNode attrs = rs.putObject("resource").putArray("attributes");
      H200TinyLmTest.attr(attrs, "service.name", "engine");
      H200TinyLmTest.attr(attrs, "llmlat.layer", "engine");
      ArrayNode spans = rs.putArray("scopeSpans").addObject().putArray("spans");
      ObjectNode request =
          H200TinyLmTest.span(
              spans,
              t,
              t.substring(0, 16),
              r.get("parent_span_id").asText(),
              "llm_request",
              2,
              r.get("arrival_ns").asLong(),
              r.get("finish_ns").asLong());
      ObjectNode event = request.putArray("events").addObject();
      event.put("name", "llmlat.first_token");
      event.put("timeUnixNano", Long.toString(firstToken));
      ObjectNode decode =
          H200TinyLmTest.span(
              spans,
              t,
              t.substring(16),
              t.substring(0, 16),
              "decode",
              1,
              firstToken,
              r.get("finish_ns").asLong());
      ArrayNode deltas =
          decode
              .putArray("attributes")
              .addObject()
              .put("key", "llmlat.decode.token_deltas_ns")
              .putObject("value")
              .putObject("arrayValue")
              .putArray("values");
      long previous = firstToken;
      for (Step s : decodes) {
        deltas.addObject().put("intValue", Long.toString(s.end() - previous));
        previous = s.end();
      }
      lines.append(H200TinyLmTest.JSON.writeValueAsString(doc)).append('\n');
    }
    Path engine = dir.resolve("engine.otlp.jsonl");
    Files.writeString(engine, lines);

    StringBuilder figures = new StringBuilder();
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      for (Object[] file :
          new Object[][] {
            {engine, ExportFormat.OTLP_JSON}, {root.resolve("tp.sqlite"), ExportFormat.NSYS_SQLITE}
          }) {
        try (StoreImportTarget target = new StoreImportTarget(store)) {
          GpuImporter.importFile(
              (Path) file[0],
              (ExportFormat) file[1],
              ImportOptions.defaults().withServiceName("engine"),
              target);
          target.commit();
        }
      }
      Analyzer analyzer = new Analyzer(store);
      assertThat(analyzer.analyze(0, Long.MAX_VALUE / 2, true).written())
          .isEqualTo(requests.size());
      Map<String, Long> stored = new HashMap<>();
      store
          .query("SELECT TraceId, RankWaitNs FROM llm_request_attribution FINAL")
          .rows()
          .forEach(row -> stored.put(row.get(0), Long.parseLong(row.get(1))));
      boolean someGapWaited = false;
      for (JsonNode r : requests) {
        String t = r.get("trace_id").asText();
        Attribution a = analyzer.explain(t);
        Truth want = truth.get(t);
        long got = a.component("rank_wait");
        assertThat(a.components().values().stream().mapToLong(Long::longValue).sum())
            .isEqualTo(a.ttftNs());
        assertThat(a.ttftNs())
            .as(t)
            .isEqualTo(r.get("first_token_ns").asLong() - r.get("arrival_ns").asLong());
        assertThat(Math.abs(got - want.waitNs()))
            .as("rank wait of %s: %d ns, truth %d ns", t, got, want.waitNs())
            .isLessThanOrEqualTo(Math.max(2_000_000, Math.round(want.waitNs() * 0.15)));
        assertThat(stored.get(t)).as("stored rank wait of %s", t).isEqualTo(got);
        assertThat(a.rankWaits().stream().mapToLong(Attribution.RankWait::waitNs).sum())
            .isEqualTo(got);
        Attribution.RankWait late =
            a.rankWaits().stream()
                .max(java.util.Comparator.comparingLong(Attribution.RankWait::waitNs))
                .orElse(null);
        if (want.waitNs() >= 20_000_000) {
          assertThat(late).as(t).isNotNull();
          assertThat(late.rank()).as(t).isEqualTo("rank " + want.lateDevice());
          assertThat(late.device()).as(t).startsWith("device " + want.lateDevice());
        }
        someGapWaited |=
            a.itl().stream()
                .anyMatch(
                    g -> g.cause().startsWith("waited ") && g.cause().contains(" ms for rank "));
        figures.append(
            String.format(
                Locale.ROOT,
                "%s TTFT %.2f ms rank_wait %.2f ms (truth %.2f, late %s) prefill_gpu %.2f"
                    + " prefill_cpu %.2f | gaps: %s%n",
                t.substring(0, 8),
                a.ttftNs() / 1e6,
                got / 1e6,
                want.waitNs() / 1e6,
                late == null ? "-" : late.rank() + " (" + late.device() + ")",
                a.component("prefill_gpu") / 1e6,
                a.component("prefill_cpu") / 1e6,
                a.itl().stream()
                    .filter(g -> !g.cause().isEmpty())
                    .map(Attribution.Gap::cause)
                    .toList()));
      }
      System.out.print(figures);
      // the decode steps rank 1 slept before (straggler.jsonl) stand out in the gaps of the
      // requests they served
      assertThat(someGapWaited).as(figures.toString()).isTrue();

      // live attribution's path: the same files as the OTLP records the importers publish, read by
      // OtlpSpanRecords
      List<SpanRecord> published = new ArrayList<>();
      for (Object[] file :
          new Object[][] {
            {engine, ExportFormat.OTLP_JSON}, {root.resolve("tp.sqlite"), ExportFormat.NSYS_SQLITE}
          }) {
        GpuImporter.importFile(
            (Path) file[0],
            (ExportFormat) file[1],
            ImportOptions.defaults().withServiceName("engine"),
            batch ->
                batch
                    .requests()
                    .forEach(
                        request ->
                            published.addAll(dev.llmlat.analyze.otlp.OtlpSpanRecords.of(request))));
      }
      Map<String, Long> live = new HashMap<>();
      TraceAttribution.attribute(published)
          .forEach(a -> live.put(a.traceId(), a.component("rank_wait")));
      assertThat(live).as("rank waits read from the published records").isEqualTo(stored);
    }
  }
}
