package dev.llmlat.load.sweep;

import dev.llmlat.load.LoadConfig;
import dev.llmlat.load.LoadResult;
import dev.llmlat.load.RequestOutcome;
import dev.llmlat.load.Slo;
import dev.llmlat.load.Target;
import dev.llmlat.load.WallClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Sweep points made by hand: at each level, {@code level x 10 s} requests, of which the first
 * {@code good} have a TTFT of {@value #GOOD_MS} ms and the rest {@value #BAD_MS} ms, against a TTFT
 * SLO of {@value #SLO_MS} ms; every request streams {@value #TOKENS} tokens {@value #GAP_MS} ms
 * apart.
 */
final class SweepPoints {
  static final double GOOD_MS = 100;
  static final double BAD_MS = 500;
  static final double SLO_MS = 200;
  static final int TOKENS = 5;
  static final double GAP_MS = 20;
  static final Duration POINT = Duration.ofSeconds(10);

  private SweepPoints() {}

  static LoadConfig base(boolean slo) {
    return LoadConfig.builder(Target.parse("http://127.0.0.1:8000", null), "tinylm")
        .requests(0)
        .duration(POINT)
        .slo(slo ? new Slo(Duration.ofMillis((long) SLO_MS), null) : Slo.none())
        .build();
  }

  static SweepConfig config(boolean slo, double target, double... levels) {
    List<Double> l = new ArrayList<>();
    for (double v : levels) {
      l.add(v);
    }
    return new SweepConfig(base(slo), SweepConfig.Axis.RATE, l, false, 0, target);
  }

  /**
   * Point {@code index} of {@code config}: its level's requests, {@code good} of them within the
   * SLO.
   */
  static SweepPoint point(SweepConfig config, int index, int good, ComponentShares shares) {
    double level = config.levels().get(index);
    int requests = (int) Math.round(level * POINT.toSeconds());
    if (good > requests) {
      throw new IllegalArgumentException(good + " good of " + requests);
    }
    long gapNs = (long) (1e9 / level);
    List<RequestOutcome> outcomes = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      long start = i * gapNs;
      long ttft = (long) ((i < good ? GOOD_MS : BAD_MS) * 1e6);
      long[] chunks = new long[TOKENS];
      for (int k = 0; k < TOKENS; k++) {
        chunks[k] = start + ttft + (long) (k * GAP_MS * 1e6);
      }
      outcomes.add(
          new RequestOutcome(
              i,
              "%032x".formatted(i + 1),
              "%016x".formatted(i + 1),
              10,
              TOKENS,
              start,
              start,
              start + 1,
              chunks,
              chunks[TOKENS - 1] + 1,
              200,
              10,
              TOKENS,
              null));
    }
    LoadConfig run = config.point(index);
    long end = outcomes.getLast().endNanos();
    LoadResult result =
        new LoadResult(run, "hand-made", outcomes, 0, end, false, 0, 0, null, new WallClock());
    return SweepPoint.of(index, level, result, shares);
  }
}
