package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.testing.ServedRequests;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code llmlat diff} on real stores: a deploy's requests before (service.version 1.4.0) and after
 * (1.5.0), written as the gateway's and the engine's spans, imported with {@code llmlat import
 * otlp-json --to store} and attributed with {@code llmlat analyze}. The same seeded stretches on
 * both sides (under other trace ids) but for what the deploy changed: the queue 40 ms longer in
 * every request, and stalls in half the requests instead of a tenth.
 */
class DiffCommandTest {
  static final long MS = 1_000_000L;
  static final long S = 1_000 * MS;
  static final long BASE = 1_795_970_300_000_000_000L;
  static final int N = 120;
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dir;
  static List<ServedRequests.Request> before;
  static List<ServedRequests.Request> after;

  @BeforeAll
  static void importAndAnalyze() throws IOException {
    before =
        ServedRequests.generate(21, N, BASE, 20 * MS, 0, 0.1, Map.of("service.version", "1.4.0"));
    after =
        ServedRequests.generate(
            21, N, BASE + 60 * S, 20 * MS, 40 * MS, 0.5, Map.of("service.version", "1.5.0"));
    List<ServedRequests.Request> both = new ArrayList<>(before);
    both.addAll(after);
    load(dir.resolve("both"), both);
    load(dir.resolve("after-only"), after);
  }

  static void load(Path store, List<ServedRequests.Request> requests) throws IOException {
    Path file = dir.resolve(store.getFileName() + ".otlp.jsonl");
    Files.write(file, ServedRequests.otlpJson(requests));
    LlmlatCliTest.Run imported =
        LlmlatCliTest.run(
            "import",
            "otlp-json",
            file.toString(),
            "--to",
            "store",
            "--data-dir",
            store.toString());
    assertThat(imported.exit()).as(imported.err()).isZero();
    LlmlatCliTest.Run analyzed = LlmlatCliTest.run("analyze", "--data-dir", store.toString());
    assertThat(analyzed.exit()).as(analyzed.err()).isZero();
    assertThat(analyzed.out()).startsWith("attributed " + requests.size() + " requests");
  }

  static String at(long ns) {
    return Instant.ofEpochSecond(0, ns).toString();
  }

  static JsonNode quantity(JsonNode diff, String name) {
    for (JsonNode q : diff.get("quantities")) {
      if (q.get("name").asText().equals(name)) {
        return q;
      }
    }
    throw new AssertionError("no quantity " + name);
  }

  /**
   * What the deploy did, as the JSON must say it with p50 and p90 (120 requests a side support p90,
   * not p99).
   */
  static void assertTheQueueMovedAlone(JsonNode diff) {
    assertThat(diff.at("/a/requests").asInt()).isEqualTo(N);
    assertThat(diff.at("/b/requests").asInt()).isEqualTo(N);
    for (String moved : List.of("ttft", "queue")) {
      for (JsonNode s : quantity(diff, moved).get("statistics")) {
        assertThat(s.get("verdict").asText()).as(moved + " " + s.get("name")).isEqualTo("up");
        assertThat(s.get("delta_ms").asDouble())
            .as(moved + " " + s.get("name"))
            .isCloseTo(40, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(s.get("low_ms").asDouble()).isLessThanOrEqualTo(40);
        assertThat(s.get("high_ms").asDouble()).isGreaterThanOrEqualTo(40);
      }
    }
    for (String c : TtftComponent.ids()) {
      if (!c.equals("queue")) {
        for (JsonNode s : quantity(diff, c).get("statistics")) {
          assertThat(s.get("verdict").asText()).as(c + " " + s.get("name")).isEqualTo("no change");
        }
      }
    }
    // the mean TTFT of side A is the scenario's
    double meanBefore =
        before.stream().mapToLong(ServedRequests.Request::ttftNs).average().orElseThrow() / 1e6;
    assertThat(quantity(diff, "ttft").at("/statistics/2/name").asText()).isEqualTo("mean");
    assertThat(quantity(diff, "ttft").at("/statistics/2/a_ms").asDouble())
        .isCloseTo(meanBefore, org.assertj.core.data.Offset.offset(1e-6));
    JsonNode mean = diff.at("/explained_by/0");
    assertThat(mean.get("over").asText()).isEqualTo("mean");
    assertThat(mean.get("components")).hasSize(1);
    assertThat(mean.at("/components/0/name").asText()).isEqualTo("queue");
    assertThat(mean.get("explained_ms").asDouble())
        .isCloseTo(40, org.assertj.core.data.Offset.offset(1e-6));
    // stalls: the requests with a 40 ms gap, among eight gaps of 8-12 ms, named slow steps
    long stalledBefore =
        before.stream().filter(r -> Arrays.stream(r.gapsNs()).anyMatch(g -> g == 40 * MS)).count();
    long stalledAfter =
        after.stream().filter(r -> Arrays.stream(r.gapsNs()).anyMatch(g -> g == 40 * MS)).count();
    JsonNode stalled = diff.at("/stalls/shares/0");
    assertThat(stalled.get("name").asText()).isEqualTo("stalled");
    assertThat(stalled.at("/statistics/0/a").asDouble())
        .isCloseTo(stalledBefore / (double) N, org.assertj.core.data.Offset.offset(1e-12));
    assertThat(stalled.at("/statistics/0/b").asDouble())
        .isCloseTo(stalledAfter / (double) N, org.assertj.core.data.Offset.offset(1e-12));
    assertThat(stalled.at("/statistics/0/verdict").asText()).isEqualTo("up");
    assertThat(diff.at("/stalls/shares/1/name").asText()).isEqualTo("top cause: slow step");
  }

  @Test
  void byTimeWindowsTheQueueExplainsTheTtftChange() throws IOException {
    LlmlatCliTest.Run r =
        LlmlatCliTest.run(
            "diff",
            "--data-dir",
            dir.resolve("both").toString(),
            "--a-from",
            at(BASE),
            "--a-to",
            at(BASE + 30 * S),
            "--b-from",
            at(BASE + 60 * S),
            "--b-to",
            at(BASE + 90 * S),
            "--percentiles",
            "50,90",
            "--format",
            "json");
    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode diff = JSON.readTree(r.out());
    assertTheQueueMovedAlone(diff);
    assertThat(diff.at("/a/label").asText())
        .isEqualTo("arrived " + at(BASE) + " to " + at(BASE + 30 * S));
  }

  @Test
  void byAResourceAttributeOfTheRequestsSpans() throws IOException {
    LlmlatCliTest.Run r =
        LlmlatCliTest.run(
            "diff",
            "--data-dir",
            dir.resolve("both").toString(),
            "--by",
            "service.version",
            "--a",
            "1.4.0",
            "--b",
            "1.5.0",
            "--percentiles",
            "50,90",
            "--format",
            "json",
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct");
    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode diff = JSON.readTree(r.out());
    assertTheQueueMovedAlone(diff);
    assertThat(diff.at("/b/label").asText())
        .isEqualTo("service.version=1.5.0, model meta-llama/Llama-3.1-8B-Instruct");
    assertThat(diff.get("notes")).isEmpty();

    LlmlatCliTest.Run text =
        LlmlatCliTest.run(
            "diff",
            "--data-dir",
            dir.resolve("both").toString(),
            "--by",
            "service.version",
            "--a",
            "1.4.0",
            "--b",
            "1.5.0",
            "--percentiles",
            "50,90",
            "--html",
            dir.resolve("diff.html").toString());
    assertThat(text.exit()).as(text.err()).isZero();
    assertThat(text.out())
        .contains("A: service.version=1.4.0  (120 requests)")
        .contains("explained by (mean): queue +40.000 ms of +40.000 ms")
        .contains("wrote " + dir.resolve("diff.html"));
    assertThat(text.out().lines().filter(l -> l.startsWith("queue ")).findFirst().orElseThrow())
        .contains("p50")
        .endsWith("up");
    assertThat(Files.readString(dir.resolve("diff.html")))
        .contains("<table id=\"diff\"")
        .doesNotContain("<script");
  }

  @Test
  void twoStores() throws IOException {
    LlmlatCliTest.Run r =
        LlmlatCliTest.run(
            "diff",
            "--a-store",
            dir.resolve("both").toString(),
            "--a-to",
            at(BASE + 30 * S),
            "--b-store",
            dir.resolve("after-only").toString(),
            "--percentiles",
            "50,90",
            "--format",
            "json");
    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode diff = JSON.readTree(r.out());
    assertTheQueueMovedAlone(diff);
    assertThat(diff.at("/b/label").asText()).isEqualTo("store " + dir.resolve("after-only"));
  }

  @Test
  void refusesWhatItCannotAnswer() {
    // 120 requests a side: p99 needs 1000
    LlmlatCliTest.Run r =
        LlmlatCliTest.run(
            "diff",
            "--data-dir",
            dir.resolve("both").toString(),
            "--by",
            "service.version",
            "--a",
            "1.4.0",
            "--b",
            "1.5.0");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err())
        .contains(
            "side A (service.version=1.4.0) has 120 requests; p99 needs at least 1000 on each side")
        .contains("120 requests support p50, p90");
    LlmlatCliTest.Run same =
        LlmlatCliTest.run("diff", "--data-dir", dir.resolve("both").toString());
    assertThat(same.exit()).isEqualTo(2);
    assertThat(same.err()).contains("the two sides are the same requests");
    LlmlatCliTest.Run overlap =
        LlmlatCliTest.run(
            "diff",
            "--data-dir",
            dir.resolve("both").toString(),
            "--a-from",
            at(BASE),
            "--a-to",
            at(BASE + 70 * S),
            "--b-from",
            at(BASE + 60 * S));
    assertThat(overlap.exit()).isEqualTo(2);
    assertThat(overlap.err()).contains("the two windows overlap");
    LlmlatCliTest.Run badTime =
        LlmlatCliTest.run(
            "diff",
            "--data-dir",
            dir.resolve("both").toString(),
            "--a-from",
            "yesterday",
            "--b-from",
            "1h");
    assertThat(badTime.exit()).isEqualTo(2);
    assertThat(badTime.err()).contains("--a-from: not a time: 'yesterday'");
    LlmlatCliTest.Run half =
        LlmlatCliTest.run(
            "diff",
            "--data-dir",
            dir.resolve("both").toString(),
            "--by",
            "service.version",
            "--a",
            "1.4.0");
    assertThat(half.exit()).isEqualTo(2);
    assertThat(half.err()).contains("--by KEY, --a VALUE and --b VALUE go together");
    // what a user types reaches the store as query parameters: hostile text selects nothing and
    // changes nothing
    String hostile = "x' OR 1=1 --";
    LlmlatCliTest.Run injected =
        LlmlatCliTest.run(
            "diff",
            "--data-dir",
            dir.resolve("both").toString(),
            "--by",
            hostile,
            "--a",
            "'); DROP TABLE otel_traces; --",
            "--b",
            "1.5.0",
            "--model",
            "' OR '1'='1",
            "--percentiles",
            "50");
    assertThat(injected.exit()).isEqualTo(2);
    assertThat(injected.err())
        .contains(
            "side A ("
                + hostile
                + "='); DROP TABLE otel_traces; --, model ' OR '1'='1) has 0 requests");
    LlmlatCliTest.Run spans =
        LlmlatCliTest.run(
            "sql",
            "--data-dir",
            dir.resolve("both").toString(),
            "--format",
            "tsv",
            "SELECT count() FROM otel_traces");
    assertThat(spans.out()).isEqualTo("count()\n" + 2 * N * 6 + "\n"); // six spans a request
    LlmlatCliTest.Run noStore =
        LlmlatCliTest.run(
            "diff",
            "--a-store",
            dir.resolve("missing").toString(),
            "--b-store",
            dir.resolve("both").toString());
    assertThat(noStore.exit()).isEqualTo(2);
    assertThat(noStore.err())
        .contains("--a-store " + dir.resolve("missing") + ": no such directory");
  }
}
