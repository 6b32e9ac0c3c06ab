package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A quick soak (20 s at 2,000 spans/s) through the real services: broker, store process and
 * ingester process. The long run is `llmlat bench soak --minutes 3`.
 */
class SoakBenchmarkTest {
  @TempDir Path dir;

  @Test
  void sustainsTheRateMeasuresLagAndHeapAndStoresEverySpanOnce() throws Exception {
    Path scratch = dir.resolve("soak");
    StringWriter text = new StringWriter();
    SoakBenchmark.Result r =
        new SoakBenchmark(
                new SoakBenchmark.Config(
                    Duration.ofSeconds(20), 2000, Duration.ofSeconds(4), 2, scratch))
            .run(new PrintWriter(text, true));

    assertThat(r.lostOrDuplicated()).as(text.toString()).isFalse();
    assertThat(r.sent()).isGreaterThan(30_000).isEqualTo(r.stored()).isEqualTo(r.distinct());
    assertThat(r.samples()).hasSizeBetween(4, 5);
    assertThat(r.samples())
        .allSatisfy(s -> assertThat(s.producedPerSecond()).isBetween(1500.0, 2500.0));
    assertThat(r.achievedSpansPerSecond()).isGreaterThan(1000);
    assertThat(r.lagP50Ms()).isPositive().isLessThanOrEqualTo(r.lagP99Ms()).isLessThan(15_000);
    assertThat(r.samples()).allSatisfy(s -> assertThat(s.liveHeapMb()).isBetween(1.0, 512.0));
    assertThat(text.toString())
        .contains(
            "t (s)   produced/s", "achieved:", "end-to-end lag after 5 s warm-up", "rule: flat =");
    assertThat(Files.exists(scratch)).as("scratch home removed").isFalse();
  }

  @Test
  void aRunTooShortForItsSamplesIsRefused() {
    assertThatThrownBy(
            () ->
                new SoakBenchmark.Config(
                    Duration.ofSeconds(20), 2000, Duration.ofSeconds(10), 1, dir))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--sample-seconds 10 is too long for a run of 20 s");
  }
}
