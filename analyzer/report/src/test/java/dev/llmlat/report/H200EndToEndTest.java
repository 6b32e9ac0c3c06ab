package dev.llmlat.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.store.EmbeddedClickHouse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The analyzer's first real workload: ../shared/traces/h200-e2e, three layers of one run on an H200
 * (the real agent's gateway spans, the engine's requests, the Nsight export), imported through the
 * product's own paths and attributed. Expected figures are derived here from the raw files,
 * independently of the analyzer.
 */
class H200EndToEndTest {
  static final ObjectMapper JSON = new ObjectMapper();
  @TempDir static Path dir;
  static EmbeddedClickHouse store;
  static Map<String, Attribution> byTrace = new HashMap<>();
  static List<JsonNode> requests = new ArrayList<>();
  static Map<String, long[]> gatewaySpans = new HashMap<>(); // trace -> server start, client start

  static Path traces() {
    return H200CaptureStore.traces();
  }

  @BeforeAll
  static void importAndAnalyze() throws IOException {
    store = EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate());
    assertThat(H200CaptureStore.populate(store, dir)).isEqualTo(16);
    for (String line : Files.readAllLines(traces().resolve("requests.jsonl"))) {
      requests.add(JSON.readTree(line));
    }
    for (String line : Files.readAllLines(traces().resolve("gateway.otlp.jsonl"))) {
      for (JsonNode rs : JSON.readTree(line).get("resourceSpans")) {
        for (JsonNode ss : rs.get("scopeSpans")) {
          for (JsonNode s : ss.get("spans")) {
            long[] times =
                gatewaySpans.computeIfAbsent(s.get("traceId").asText(), k -> new long[2]);
            times[
                    s.get("kind").asInt() == 2 || "SPAN_KIND_SERVER".equals(s.get("kind").asText())
                        ? 0
                        : 1] =
                s.get("startTimeUnixNano").asLong();
          }
        }
      }
    }
    for (JsonNode r : requests) {
      byTrace.put(
          r.get("trace_id").asText(), new Analyzer(store).explain(r.get("trace_id").asText()));
    }
  }

  @AfterAll
  static void close() {
    store.close();
  }

  @Test
  void everyRequestIsAttributedAndItsComponentsSumToTtft() {
    assertThat(
            store
                .query(
                    "SELECT count(), countIf(GatewayInNs + NetworkInNs + QueueNs + PrefillCpuNs + PrefillGpuNs"
                        + " + BatchInterferenceNs + FirstSampleNs + NetworkOutNs + GatewayOutNs + UnattributedNs = TtftNs)"
                        + " FROM llm_request_attribution FINAL")
                .rows()
                .get(0))
        .containsExactly("16", "16");
    // a second run finds nothing new and changes nothing
    assertThat(new Analyzer(store).analyze(0, Long.MAX_VALUE / 2, true).written()).isZero();
  }

  @Test
  void analysisInChunksOfThreeAgreesWithExplainForEveryRequest() {
    // chunk boundaries fall between neighbouring requests: each chunk's read window (its requests'
    // span plus the longest span and skew slack) must still hold every span the request needs
    assertThat(new Analyzer(store, 3).analyze(0, Long.MAX_VALUE / 2, false).written())
        .isEqualTo(16);
    for (Map.Entry<String, Attribution> e : byTrace.entrySet()) {
      List<String> row =
          store
              .query(
                  "SELECT TtftNs, "
                      + String.join(
                          ", ", TtftComponent.all().stream().map(TtftComponent::column).toList())
                      + " FROM llm_request_attribution FINAL WHERE TraceId = '"
                      + e.getKey()
                      + "'")
              .rows()
              .get(0);
      List<String> expected = new ArrayList<>();
      expected.add(Long.toString(e.getValue().ttftNs()));
      for (TtftComponent c : TtftComponent.all()) {
        expected.add(Long.toString(e.getValue().component(c)));
      }
      assertThat(row).as(e.getKey()).isEqualTo(expected);
    }
  }

  @Test
  void ttftRunsFromTheGatewaysServerSpanToTheEnginesFirstToken() {
    for (JsonNode r : requests) {
      String t = r.get("trace_id").asText();
      Attribution a = byTrace.get(t);
      long serverStart = gatewaySpans.get(t)[0];
      assertThat(a.startLayer()).isEqualTo("gateway");
      assertThat(a.ttftNs()).as(t).isEqualTo(r.get("first_token_ns").asLong() - serverStart);
      assertThat(a.notes())
          .contains(
              "the gateway recorded no first-chunk time: TTFT ends at the engine's first token");
      // one host clock: no correction applied
      assertThat(a.corrections()).allMatch(c -> !c.applied());
    }
  }

  @Test
  void theGatewayAndNetworkStretchesMatchTheRawSpans() {
    long largestNetworkIn = 0;
    String slowest = null;
    for (JsonNode r : requests) {
      String t = r.get("trace_id").asText();
      Attribution a = byTrace.get(t);
      long[] g = gatewaySpans.get(t);
      assertThat(a.component("gateway_in")).as(t).isEqualTo(g[1] - g[0]);
      assertThat(a.component("network_in")).as(t).isEqualTo(r.get("arrival_ns").asLong() - g[1]);
      long gatewayToEngine = a.component("gateway_in") + a.component("network_in");
      if (gatewayToEngine > largestNetworkIn) {
        largestNetworkIn = gatewayToEngine;
        slowest = t;
      }
    }
    // "the first request loses ~120 ms between gateway and engine (the first call through the
    // gateway's HTTP client)"
    assertThat(largestNetworkIn).isBetween(100_000_000L, 150_000_000L);
    String first =
        requests.stream()
            .min(
                (x, y) ->
                    Long.compare(
                        gatewaySpans.get(x.get("trace_id").asText())[0],
                        gatewaySpans.get(y.get("trace_id").asText())[0]))
            .orElseThrow()
            .get("trace_id")
            .asText();
    assertThat(slowest).isEqualTo(first);
  }

  @Test
  void queueingBehindOtherRequestsIsTheLargestPartForMostRequests() {
    int queueLargest = 0;
    for (Attribution a : byTrace.values()) {
      String largest =
          a.components().entrySet().stream()
              .max(Map.Entry.comparingByValue())
              .orElseThrow()
              .getKey();
      if (largest.equals("queue")) {
        queueLargest++;
      }
    }
    // the capture's README: "for 14 of the 16 requests, queueing behind other requests' prefill and
    // decode steps is the largest part"
    assertThat(queueLargest).isGreaterThanOrEqualTo(13);
  }

  /** Every query in the cookbook users copy from runs on this capture and returns rows. */
  @Test
  void everyCookbookQueryRunsOnTheCapture() throws IOException {
    Path cookbook =
        Path.of(System.getProperty("user.dir"))
            .toAbsolutePath()
            .getParent()
            .getParent()
            .resolve("schemas/clickhouse/cookbook.sql");
    String text = Files.readString(cookbook);
    int queries = 0;
    for (String chunk : text.split("(?m)^-- name: ")) {
      if (chunk.isBlank() || chunk.startsWith("--")) {
        continue;
      }
      String name = chunk.lines().findFirst().orElseThrow().strip();
      String sql = chunk.substring(chunk.indexOf('\n') + 1).strip();
      sql = sql.endsWith(";") ? sql.substring(0, sql.length() - 1) : sql;
      List<List<String>> rows = store.query(sql).rows();
      if (!name.equals(
          "stalls_caused_by_long_prompts")) { // this capture's engine names no prefill sizes
        assertThat(rows).as(name).isNotEmpty();
      }
      queries++;
    }
    assertThat(queries).isEqualTo(8);
  }

  /** The HTML report, rendered by a real headless Chromium: its DOM and its pixels. */
  @Test
  void theHtmlReportRendersInARealBrowser() throws Exception {
    dev.llmlat.testing.HeadlessChromium chromium =
        dev.llmlat.testing.HeadlessChromium.require(dir.resolve("chromium-profile"));
    AttributionReport report = AttributionReport.load(store, 0, 500_000_000L);
    String html = report.html();
    assertThat(html)
        .doesNotContain("http://", "https://", "<script"); // self-contained: no external assets
    Path page = dir.resolve("report.html");
    Files.writeString(page, html);
    String dom = chromium.dom(page);
    assertThat(dom)
        .contains("<svg id=\"waterfall\"")
        .contains("<svg id=\"histogram\"")
        .contains("16 requests");
    String components = dom.substring(dom.indexOf("<table id=\"components\""));
    components = components.substring(0, components.indexOf("</table>"));
    assertThat(components.split("<tr>", -1).length - 2)
        .isEqualTo(TtftComponent.all().size()); // one row per component
    assertThat(dom).contains("<table id=\"engines\"");
    java.util.Map<Integer, Integer> colors =
        chromium.colours(page, dir.resolve("report.png"), 1100, 1400);
    // the waterfall's queue bars (the largest part for most requests) and the histogram's bars are
    // drawn
    assertThat(colors.getOrDefault(0xE45756, 0)).as("queue-coloured pixels").isGreaterThan(200);
    assertThat(colors.getOrDefault(0x4C78A8, 0)).as("histogram-coloured pixels").isGreaterThan(200);
  }

  @Test
  void prefillIsTheRequestsOwnGpuStepAndItsLaunchGaps() throws IOException {
    Map<String, long[]> prefillSteps = new HashMap<>();
    for (String line : Files.readAllLines(traces().resolve("cuda_events.jsonl"))) {
      JsonNode s = JSON.readTree(line);
      if ("prefill".equals(s.get("kind").asText())) {
        prefillSteps.put(
            s.get("trace_ids").get(0).asText(),
            new long[] {
              s.get("host_submit_unix_ns").asLong(), s.get("host_done_unix_ns").asLong()
            });
      }
    }
    for (JsonNode r : requests) {
      String t = r.get("trace_id").asText();
      Attribution a = byTrace.get(t);
      long[] step = prefillSteps.get(t);
      long prefill =
          a.component("prefill_cpu")
              + a.component("prefill_gpu")
              + a.component("batch_interference");
      // the GPU step runs inside the host's submit..done bracket of the prefill step
      assertThat(prefill).as(t).isPositive().isLessThanOrEqualTo(step[1] - step[0]);
      assertThat(a.component("prefill_gpu")).as(t).isPositive();
      assertThat(a.component("batch_interference"))
          .as(t)
          .isZero(); // prefill-first: a prefill step serves one request
    }
  }
}
