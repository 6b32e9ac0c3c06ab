package dev.llmlat.load.sweep;

import static dev.llmlat.load.sweep.SweepPoints.config;
import static dev.llmlat.load.sweep.SweepPoints.point;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The summary, its result file and its words on hand-made points. */
class SweepSummaryTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void componentSharesSayWhichPartLeadsByHowMuchAndTheBindingLimit() {
    Map<String, Long> ns = new LinkedHashMap<>();
    ns.put("network_in", 90L);
    ns.put("queue", 610L);
    ns.put("prefill_gpu", 210L);
    ns.put("first_sample", 90L);
    ComponentShares s =
        new ComponentShares(
            4,
            1000,
            ns,
            List.of(
                new ComponentShares.Limit(
                    "batch at max_num_seqs N", "batch at max_num_seqs 8", 1, 20),
                new ComponentShares.Limit("KV cache N% full", "KV cache 97% full", 3, 500)));
    assertThat(s.ranked()).containsExactly("queue", "prefill_gpu", "network_in", "first_sample");
    assertThat(s.share("queue")).isEqualTo(0.61);
    assertThat(s.binding().example())
        .isEqualTo("KV cache 97% full"); // the most queue time, not the first listed
    assertThat(s.sentence("8 req/s"))
        .isEqualTo(
            "at 8 req/s queue is 61% of TTFT, 40 points ahead of prefill_gpu (21%); binding limit: KV cache 97% full (3 of 4 requests)");
  }

  @Test
  void theSummaryAndTheResultFileHoldEveryPointWithItsGoodputAndTheKnee() throws Exception {
    SweepConfig config = config(true, 0.9, 1, 2, 4, 8);
    int[] good = {10, 20, 38, 40};
    List<SweepPoint> points = KneeTest.points(config, good);
    points.set(
        3, point(config, 3, 40, KneeTest.shares(80, Map.of("queue", 300.0, "prefill_gpu", 50.0))));
    SweepSummary summary = SweepSummary.of(config, points, false);

    StringWriter text = new StringWriter();
    summary.print(new PrintWriter(text, true));
    double[] knee = KneeTest.wilson(38, 40);
    assertThat(text.toString())
        .contains(
            String.format(
                java.util.Locale.ROOT,
                "Knee: 4 req/s (goodput 95.0%%, 95%% CI %.1f-%.1f%%, target 90%%)",
                100 * knee[0],
                100 * knee[1]))
        .contains(
            "at 8 req/s queue is 86% of TTFT, 72 points ahead of prefill_gpu (14%)") // 300 and 50
        // of 350 ms:
        // 86% - 14%
        .contains("Load Sweep: 4 of 4 points, 10 s each");
    assertThat(text.toString().lines().filter(l -> l.matches("^\\d+ req/s .*"))).hasSize(4);

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    dev.llmlat.load.ResultFile.write(SweepResultFile.of(summary), bytes);
    JsonNode file = JSON.readTree(bytes.toByteArray());
    JsonNode results = file.get("results");
    assertThat(results).hasSize(4);
    for (int i = 0; i < 4; i++) {
      JsonNode r = results.get(i);
      int requests = (int) (config.levels().get(i) * 10);
      // one vLLM result per point: its keys, its requests
      assertThat(r.get("request_rate").asDouble()).isEqualTo(config.levels().get(i));
      assertThat(r.get("completed").asInt()).isEqualTo(requests);
      assertThat(r.get("ttfts")).hasSize(requests);
      assertThat(r.has("mean_ttft_ms") && r.has("p99_itl_ms") && r.has("request_goodput")).isTrue();
      assertThat(r.get("llmlat_goodput").get("good").asInt()).isEqualTo(good[i]);
      assertThat(r.get("llmlat_sweep_point").get("index").asInt()).isEqualTo(i);
    }
    JsonNode sweep = file.get("llmlat_sweep");
    assertThat(sweep.get("points")).hasSize(4);
    assertThat(sweep.get("knee").get("verdict").asText()).isEqualTo("found");
    assertThat(sweep.get("knee").get("level").asDouble()).isEqualTo(4);
    assertThat(sweep.get("knee").get("first_miss_level").asDouble()).isEqualTo(8);
    assertThat(sweep.get("knee").get("ci95_low").asDouble()).isCloseTo(knee[0], within(1e-12));
    assertThat(
            sweep.get("points").get(3).get("ttft_components").get("shares").get("queue").asDouble())
        .isCloseTo(300.0 / 350, within(1e-12));
    // offered load rises with the level: requests sent per second of each point's 10 s
    for (int i = 0; i < 4; i++) {
      assertThat(sweep.get("points").get(i).get("offered_per_s").asDouble())
          .isEqualTo(config.levels().get(i));
    }
  }
}
