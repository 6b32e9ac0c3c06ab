package dev.llmlat.load.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.engine.DemoEngine;
import dev.llmlat.engine.EngineConfig;
import dev.llmlat.engine.ExporterKind;
import dev.llmlat.load.LoadConfig;
import dev.llmlat.load.ResultFile;
import dev.llmlat.load.Slo;
import dev.llmlat.load.SyntheticPrompts;
import dev.llmlat.load.SyntheticPrompts.Length;
import dev.llmlat.load.Target;
import dev.llmlat.testing.HeadlessChromium;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real sweeps against the real demo engine (4 sequences at most, 20x faster than the H200 it
 * models: about 17 requests of 16 tokens a second): 2 and 8 req/s it serves, 32 req/s it cannot.
 * The files are written after each point, as {@code llmlat load --sweep-rate} writes them.
 */
class SweepRunTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final double SLO_TTFT_MS = 250;

  @TempDir Path dir;

  private static EngineConfig engine() {
    return EngineConfig.builder()
        .port(0)
        .model("tinylm")
        .maxNumSeqs(4)
        .timeScale(0.05)
        .exporter(ExporterKind.NONE)
        .build();
  }

  private static SweepConfig sweep(DemoEngine engine, Duration point, double... levels) {
    LoadConfig base =
        LoadConfig.builder(Target.parse(engine.baseUri().toString(), null), "tinylm")
            .requests(0)
            .duration(point)
            .warmup(2)
            .slo(new Slo(Duration.ofNanos((long) (SLO_TTFT_MS * 1e6)), null))
            .build();
    List<Double> l = new ArrayList<>();
    for (double v : levels) {
      l.add(v);
    }
    return new SweepConfig(base, SweepConfig.Axis.RATE, l, false, 0, 0.9);
  }

  /** Writes the result file and the page after every point. */
  private record WrittenFiles(Path result, Path page, List<Integer> written)
      implements Sweep.Listener {
    @Override
    public void finished(SweepPoint point, SweepSummary summary) {
      try (OutputStream out = Files.newOutputStream(result)) {
        ResultFile.write(SweepResultFile.of(summary), out);
        Files.writeString(page, SweepPage.html(summary));
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      written.add(summary.points().size());
    }
  }

  @Test
  void aSweepFindsTheKneeWritesOneVllmResultPerPointAndAPageChromiumRenders() throws Exception {
    SweepSummary summary;
    WrittenFiles files =
        new WrittenFiles(dir.resolve("sweep.json"), dir.resolve("sweep.html"), new ArrayList<>());
    SweepConfig config;
    try (DemoEngine engine = DemoEngine.start(engine())) {
      config = sweep(engine, Duration.ofSeconds(3), 2, 8, 32);
      summary =
          Sweep.start(config, new SyntheticPrompts(new Length(40, 0), new Length(16, 0), 1), files)
              .await();
    }
    assertThat(files.written()).containsExactly(1, 2, 3); // rewritten after each point
    assertThat(summary.stopped()).isFalse();

    JsonNode file = JSON.readTree(files.result().toFile());
    JsonNode results = file.get("results");
    assertThat(results).hasSize(3);
    double previousOffered = 0;
    int firstUnder = -1;
    for (int i = 0; i < 3; i++) {
      JsonNode r = results.get(i);
      assertThat(r.get("request_rate").asDouble()).isEqualTo(config.levels().get(i));
      assertThat(r.get("failed").asInt()).isZero();
      // offered load from the file: requests sent over the point's 3 s, rising with the level
      double offered = r.get("num_prompts").asInt() / 3.0;
      assertThat(offered)
          .isGreaterThan(previousOffered)
          .isCloseTo(config.levels().get(i), org.assertj.core.data.Percentage.withPercentage(20));
      previousOffered = offered;
      // goodput recomputed from the per-request TTFTs the file holds
      int good = 0;
      for (JsonNode t : r.get("ttfts")) {
        good += t.asDouble() * 1000 <= SLO_TTFT_MS ? 1 : 0;
      }
      assertThat(r.get("llmlat_goodput").get("good").asInt()).isEqualTo(good);
      if (firstUnder < 0 && good < 0.9 * r.get("ttfts").size()) {
        firstUnder = i;
      }
    }
    // the engine serves 2 req/s within the SLO and falls behind at 32
    assertThat(firstUnder).isBetween(1, 2);
    JsonNode knee = file.get("llmlat_sweep").get("knee");
    assertThat(knee.get("verdict").asText()).isEqualTo("found");
    assertThat(knee.get("level").asDouble()).isEqualTo(config.levels().get(firstUnder - 1));
    assertThat(knee.get("first_miss_level").asDouble()).isEqualTo(config.levels().get(firstUnder));
    assertThat(knee.get("grew_most").get("what").asText())
        .isEqualTo("TTFT"); // no store here: the client's figures
    assertThat(summary.knee().point().level()).isEqualTo(config.levels().get(firstUnder - 1));

    String html = Files.readString(files.page());
    assertThat(html).doesNotContain("http://", "https://", "<script"); // self-contained
    HeadlessChromium chromium = HeadlessChromium.require(dir.resolve("chromium-profile"));
    String dom = chromium.dom(files.page());
    assertThat(dom)
        .contains("<svg id=\"curve\"")
        .contains("<svg id=\"goodput\"")
        .contains("id=\"knee-mark\"")
        .contains("id=\"components-none\"");
    String table = dom.substring(dom.indexOf("<table id=\"points\""));
    table = table.substring(0, table.indexOf("</table>"));
    assertThat(table.split("<tr>", -1).length - 2).isEqualTo(3); // a row per point
    Map<Integer, Integer> colours =
        chromium.colours(files.page(), dir.resolve("sweep.png"), 900, 1400);
    assertThat(colours.getOrDefault(0x4C78A8, 0)).as("TTFT p50 pixels").isGreaterThan(50);
    assertThat(colours.getOrDefault(0xF58518, 0)).as("TTFT p99 pixels").isGreaterThan(50);
    assertThat(colours.getOrDefault(0x54A24B, 0)).as("points meeting the SLO").isGreaterThan(20);
    assertThat(colours.getOrDefault(0xD62728, 0)).as("points missing it").isGreaterThan(20);
  }

  @Test
  void stoppingASweepKeepsThePointsThatFinished() throws Exception {
    CountDownLatch first = new CountDownLatch(1);
    WrittenFiles files =
        new WrittenFiles(
            dir.resolve("stopped.json"), dir.resolve("stopped.html"), new ArrayList<>());
    Sweep.Listener listener =
        new Sweep.Listener() {
          @Override
          public void finished(SweepPoint point, SweepSummary summary) {
            files.finished(point, summary);
            first.countDown();
          }
        };
    SweepSummary summary;
    try (DemoEngine engine = DemoEngine.start(engine())) {
      Sweep sweep =
          Sweep.start(
              sweep(engine, Duration.ofSeconds(2), 2, 4, 8),
              new SyntheticPrompts(new Length(20, 0), new Length(8, 0), 2),
              listener);
      assertThat(first.await(60, TimeUnit.SECONDS)).isTrue();
      sweep.stop(Duration.ofSeconds(1)); // the second point is under way
      summary = sweep.await();
    }
    assertThat(summary.stopped()).isTrue();
    assertThat(summary.points())
        .hasSize(1)
        .first()
        .satisfies(p -> assertThat(p.level()).isEqualTo(2));
    JsonNode file = JSON.readTree(files.result().toFile());
    assertThat(file.get("results")).hasSize(1);
    assertThat(file.get("results").get(0).get("llmlat_stopped").asBoolean())
        .isFalse(); // the kept point ran its whole duration
  }
}
