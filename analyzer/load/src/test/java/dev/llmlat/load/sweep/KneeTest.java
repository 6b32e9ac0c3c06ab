package dev.llmlat.load.sweep;

import static dev.llmlat.load.sweep.SweepPoints.config;
import static dev.llmlat.load.sweep.SweepPoints.point;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The knee on hand-made sweeps whose truth is plain from how they were made. */
class KneeTest {
  @Test
  void theKneeIsTheLastLevelBeforeGoodputFallsBelowTheTarget() {
    SweepConfig config = config(true, 0.9, 1, 2, 4, 8, 16);
    int[] good = {10, 20, 39, 48, 16}; // of 10, 20, 40, 80, 160: 100%, 100%, 97.5%, 60%, 10%
    List<SweepPoint> points = points(config, good);
    // the truth, from the counts: the first level under 90% is 8 req/s (index 3)
    int firstUnder = -1;
    for (int i = 0; i < good.length; i++) {
      if (good[i] < 0.9 * config.levels().get(i) * 10) {
        firstUnder = i;
        break;
      }
    }
    assertThat(firstUnder).isEqualTo(3);

    Knee knee = Knee.find(points, true, 0.9);
    assertThat(knee.verdict()).isEqualTo(Knee.Verdict.FOUND);
    assertThat(knee.point().level()).isEqualTo(config.levels().get(firstUnder - 1));
    assertThat(knee.firstMiss().level()).isEqualTo(config.levels().get(firstUnder));
    assertThat(knee.firstMiss().index() - knee.point().index())
        .isEqualTo(1); // within one point of the fall
    assertThat(knee.metAgainAt()).isEmpty();
    // 39 of 40: the knee's interval, by Wilson's formula here
    double[] wilson = wilson(39, 40);
    assertThat(knee.point().metrics().goodFraction().low()).isCloseTo(wilson[0], within(1e-12));
    assertThat(knee.point().metrics().goodFraction().high()).isCloseTo(wilson[1], within(1e-12));
    assertThat(knee.uncertain()).isEqualTo(wilson[0] < 0.9); // 39/40's interval reaches below 90%
    // no components: what grew is the client's TTFT, mean (39*100 + 500)/40 -> (48*100 + 32*500)/80
    // ms
    assertThat(knee.growth().what()).isEqualTo("TTFT");
    assertThat(knee.growth().fromMs()).isCloseTo((39 * 100 + 500) / 40.0, within(1e-9));
    assertThat(knee.growth().toMs()).isCloseTo((48 * 100 + 32 * 500) / 80.0, within(1e-9));
    assertThat(knee.describe(config))
        .startsWith("knee: 4 req/s (goodput 97.5%, 95% CI ")
        .contains("at 8 req/s goodput fell to 60.0%")
        .contains("TTFT grew most: mean 110.0 -> 260.0 ms per request");
  }

  @Test
  void aLevelThatMeetsTheSloAgainAboveAMissIsNoiseNotTheKnee() {
    SweepConfig config = config(true, 0.9, 2, 4, 8, 16);
    Knee knee =
        Knee.find(points(config, new int[] {20, 30, 78, 40}), true, 0.9); // 100%, 75%, 97.5%, 25%
    assertThat(knee.verdict()).isEqualTo(Knee.Verdict.FOUND);
    assertThat(knee.point().level()).isEqualTo(2);
    assertThat(knee.firstMiss().level()).isEqualTo(4);
    assertThat(knee.metAgainAt()).containsExactly(8.0);
    assertThat(knee.describe(config)).contains("8 req/s met it again");
  }

  @Test
  void whenEveryPointMeetsTheSloOrNoneDoesTheKneeLiesOutsideTheSweep() {
    SweepConfig config = config(true, 0.9, 4, 8, 16);
    Knee above = Knee.find(points(config, new int[] {40, 80, 160}), true, 0.9);
    assertThat(above.verdict()).isEqualTo(Knee.Verdict.ABOVE_RANGE);
    assertThat(above.point().level()).isEqualTo(16);
    assertThat(above.firstMiss()).isNull();
    assertThat(above.uncertain()).isFalse(); // 160 of 160: the interval's low end is above 97%
    assertThat(above.describe(config))
        .startsWith("every point met the SLO (90% of requests): the knee lies above 16 req/s");

    Knee below = Knee.find(points(config, new int[] {20, 80, 160}), true, 0.9);
    assertThat(below.verdict()).isEqualTo(Knee.Verdict.BELOW_RANGE);
    assertThat(below.firstMiss().level()).isEqualTo(4);
    assertThat(below.metAgainAt()).containsExactly(8.0, 16.0);
    assertThat(below.describe(config)).startsWith("even 4 req/s missed the SLO (goodput 50.0%");

    assertThat(Knee.find(points(config, new int[] {40, 80, 160}), false, 0.9).verdict())
        .isEqualTo(Knee.Verdict.NO_SLO);
    assertThat(Knee.find(List.of(), true, 0.9).verdict()).isEqualTo(Knee.Verdict.NO_POINTS);
  }

  @Test
  void withComponentsTheComponentThatGrewMostPerRequestIsNamed() {
    SweepConfig config = config(true, 0.9, 2, 4);
    // at the knee 20 requests: queue 5 ms, prefill 40 ms each; past it 40 requests: queue 300 ms,
    // prefill 45 ms each
    ComponentShares atKnee =
        shares(20, Map.of("queue", 5.0, "prefill_gpu", 40.0, "first_sample", 1.0));
    ComponentShares past =
        shares(40, Map.of("queue", 300.0, "prefill_gpu", 45.0, "first_sample", 1.0));
    List<SweepPoint> points = List.of(point(config, 0, 20, atKnee), point(config, 1, 10, past));
    Knee knee = Knee.find(points, true, 0.9);
    assertThat(knee.growth().what()).isEqualTo("queue");
    assertThat(knee.growth().fromMs()).isCloseTo(5.0, within(1e-9));
    assertThat(knee.growth().toMs()).isCloseTo(300.0, within(1e-9));
  }

  @Test
  void aSweepIsValidatedWithMessagesNamingTheOption() {
    assertThatThrownBy(() -> config(true, 0.9, 4, 2))
        .hasMessage("--sweep-rate levels must rise: 2 comes after 4");
    assertThatThrownBy(() -> config(true, 0.9, 0, 2))
        .hasMessageContaining("--sweep-rate 0: --rate must be above 0");
    assertThatThrownBy(() -> config(true, 0, 1, 2))
        .hasMessageContaining("--slo-target must be above 0%");
    assertThatThrownBy(
            () ->
                new SweepConfig(
                    SweepPoints.base(true),
                    SweepConfig.Axis.CONCURRENCY,
                    List.of(1.0, 2.5),
                    false,
                    0,
                    0.9))
        .hasMessageContaining(
            "--sweep-concurrency levels are client counts from 1 to 100000, not 2.5");
    assertThatThrownBy(() -> SweepConfig.parseLevels("--sweep-rate", "1,,4"))
        .hasMessageContaining("separated by commas");
    assertThatThrownBy(() -> SweepConfig.parseLevels("--sweep-rate", "1,fast"))
        .hasMessageContaining("'fast' is none");
    assertThat(SweepConfig.parseLevels("--sweep-rate", "1, 2.5,4")).containsExactly(1.0, 2.5, 4.0);
    var noDuration =
        dev.llmlat.load.LoadConfig.builder(
                dev.llmlat.load.Target.parse("http://127.0.0.1:8000", null), "m")
            .build();
    assertThatThrownBy(
            () -> new SweepConfig(noDuration, SweepConfig.Axis.RATE, List.of(1.0), false, 0, 0.9))
        .hasMessageContaining("a sweep runs each point for --duration");
  }

  static List<SweepPoint> points(SweepConfig config, int[] good) {
    List<SweepPoint> points = new ArrayList<>();
    for (int i = 0; i < good.length; i++) {
      points.add(point(config, i, good[i], null));
    }
    return points;
  }

  /** {@code requests} requests whose components took {@code msEach} each. */
  static ComponentShares shares(int requests, Map<String, Double> msEach) {
    Map<String, Long> ns = new LinkedHashMap<>();
    long ttft = 0;
    for (String c : List.of("queue", "prefill_gpu", "first_sample")) {
      long total = Math.round(msEach.getOrDefault(c, 0.0) * 1e6) * requests;
      ns.put(c, total);
      ttft += total;
    }
    return new ComponentShares(requests, ttft, ns, List.of());
  }

  /** The Wilson score interval at 95% (z = 1.959964), written out. */
  static double[] wilson(int k, int n) {
    double z = 1.959963984540054;
    double p = (double) k / n;
    double denominator = 1 + z * z / n;
    double centre = p + z * z / (2 * n);
    double half = z * Math.sqrt(p * (1 - p) / n + z * z / (4.0 * n * n));
    return new double[] {(centre - half) / denominator, (centre + half) / denominator};
  }
}
