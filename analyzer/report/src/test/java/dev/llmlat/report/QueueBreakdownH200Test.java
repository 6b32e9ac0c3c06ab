package dev.llmlat.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.QueueBreakdown;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The queue breakdown on ../shared/traces/h200-e2e against a reading of the Nsight export written
 * here: engine.sqlite's NVTX step ranges ({@code prefill <id>}, {@code decode <ids>}) overlapped
 * with each request's [arrival, its first step), by plain SQL, independently of the importer.
 */
class QueueBreakdownH200Test {
  static final ObjectMapper JSON = new ObjectMapper();
  static final long MS = 1_000_000L;
  @TempDir Path dir;

  /** An NVTX step range on the Unix clock. */
  record Range(long startNs, long endNs, String text) {}

  static List<Range> nvtxSteps() throws Exception {
    List<Range> out = new ArrayList<>();
    Path sqlite = H200CaptureStore.traces().resolve("engine.sqlite");
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + sqlite)) {
      long base;
      try (ResultSet r =
          c.createStatement()
              .executeQuery("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")) {
        base = r.getLong(1);
      }
      try (ResultSet r =
          c.createStatement()
              .executeQuery(
                  "SELECT n.start, n.end, coalesce(n.text, s.value) FROM NVTX_EVENTS n"
                      + " LEFT JOIN StringIds s ON s.id = n.textId WHERE n.end IS NOT NULL ORDER BY n.start")) {
        while (r.next()) {
          String text = r.getString(3);
          if (text != null && (text.startsWith("prefill ") || text.startsWith("decode "))) {
            out.add(new Range(base + r.getLong(1), base + r.getLong(2), text));
          }
        }
      }
    }
    return out;
  }

  @Test
  void whatEachRequestQueuedBehindMatchesTheNvtxRanges() throws Exception {
    List<Range> steps = nvtxSteps();
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      assertThat(H200CaptureStore.populate(store, dir)).isEqualTo(16);
      Analyzer analyzer = new Analyzer(store);
      int checked = 0;
      StringBuilder figures = new StringBuilder();
      for (String line : Files.readAllLines(H200CaptureStore.traces().resolve("requests.jsonl"))) {
        JsonNode req = JSON.readTree(line);
        String trace = req.get("trace_id").asText();
        long arrival = req.get("arrival_ns").asLong();
        long firstStep =
            steps.stream()
                .filter(s -> s.text().contains(trace))
                .mapToLong(Range::startNs)
                .min()
                .orElseThrow();
        long prefill = 0;
        long decode = 0;
        Map<String, Long> blockers = new HashMap<>();
        for (Range s : steps) {
          long overlap = Math.min(s.endNs(), firstStep) - Math.max(s.startNs(), arrival);
          if (overlap <= 0) {
            continue;
          }
          if (s.text().startsWith("prefill ")) {
            prefill += overlap;
            blockers.merge(s.text().substring("prefill ".length()).trim(), overlap, Long::sum);
          } else {
            decode += overlap;
          }
        }
        Attribution a = analyzer.explain(trace);
        QueueBreakdown q = a.queueBreakdown();
        assertThat(q.totalNs()).as(trace).isEqualTo(a.component("queue"));
        figures.append(
            String.format(
                "%s queue %8.3f ms (NVTX %8.3f): prefill %8.3f (NVTX %8.3f) decode %8.3f (NVTX %8.3f)"
                    + " between %7.3f  longest %s%n",
                trace.substring(0, 8),
                a.component("queue") / 1e6,
                (firstStep - arrival) / 1e6,
                q.ns(QueueBreakdown.PREFILL) / 1e6,
                prefill / 1e6,
                q.ns(QueueBreakdown.DECODE) / 1e6,
                decode / 1e6,
                q.ns(QueueBreakdown.BETWEEN_STEPS) / 1e6,
                q.longestBlocker() == null ? "-" : q.longestBlocker().traceId().substring(0, 8)));
        if (firstStep - arrival < 20 * MS) {
          continue;
        }
        checked++;
        assertThat((double) q.ns(QueueBreakdown.PREFILL))
            .as("behind prefill: " + trace)
            .isCloseTo(
                prefill, org.assertj.core.data.Offset.offset(Math.max(2.0 * MS, 0.1 * prefill)));
        assertThat((double) q.ns(QueueBreakdown.DECODE))
            .as("behind decode: " + trace)
            .isCloseTo(
                decode, org.assertj.core.data.Offset.offset(Math.max(2.0 * MS, 0.1 * decode)));
        if (!blockers.isEmpty()) {
          String longest =
              blockers.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
          assertThat(q.longestBlocker().traceId()).as(trace).isEqualTo(longest);
          assertThat(q.longestBlocker().cause())
              .startsWith("behind prefill of request " + longest + " (")
              .endsWith(" tokens)");
        }
      }
      System.out.print(figures);
      assertThat(checked).isGreaterThanOrEqualTo(10);

      // stored: the arrays sum to QueueNs in every row, and the report ranks them
      assertThat(
              store
                  .query(
                      "SELECT countIf(arraySum(QueueCauseNs) = QueueNs), countIf(length(QueueCauseKind) > 0)"
                          + " FROM llm_request_attribution FINAL")
                  .rows()
                  .get(0))
          .containsExactly("16", "16");
      QueueCauses causes = QueueCauses.load(store, 0);
      assertThat(causes.kinds())
          .extracting(QueueCauses.Cause::name)
          .contains(QueueBreakdown.PREFILL, QueueBreakdown.DECODE);
      assertThat(causes.kinds().stream().mapToLong(QueueCauses.Cause::ns).sum())
          .isEqualTo(causes.queueNs());
      StringWriter text = new StringWriter();
      AttributionReport.load(store, 0, 500 * MS).printText(new PrintWriter(text));
      System.out.print(text);
      assertThat(text.toString())
          .contains("queue causes (16 requests")
          .contains("requests others queued behind longest");
      assertThat(
              JSON.readTree(AttributionReport.load(store, 0, 500 * MS).json())
                  .get("queue_causes")
                  .get("kinds")
                  .get(0)
                  .get("kind")
                  .asText())
          .isIn(QueueBreakdown.PREFILL, QueueBreakdown.DECODE);
      StringWriter explained = new StringWriter();
      // the slowest request that queued behind another's prefill
      Attribution slowest =
          AttributionReport.load(store, 0, 500 * MS).slowest().stream()
              .map(s -> analyzer.explain(s.traceId()))
              .filter(x -> x.queueBreakdown().longestBlocker() != null)
              .findFirst()
              .orElseThrow();
      Waterfall.print(slowest, new PrintWriter(explained));
      System.out.print(explained);
      assertThat(explained.toString())
          .contains("while the engine ran:")
          .contains("behind prefill of request ");
      JsonNode json = QueueBreakdownText.json(slowest);
      assertThat(json.get(0).has("ns")).isTrue();
      assertThat(json.findValues("trace_id")).isNotEmpty();
    }
  }
}
