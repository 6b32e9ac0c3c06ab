package dev.llmlat.report.diff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.semconv.TtftComponent;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Comparisons of synthetic samples whose truth is built in: components drawn uniformly (seeded)
 * from the ranges below, a queue shift where a test puts one.
 */
class SampleComparisonTest {
  static final long MS = 1_000_000L;
  static final int QUEUE = TtftComponent.QUEUE.ordinal();
  static final double FORTY = 40 * MS;

  /** Each component's range in ms; the others are 0. */
  static final List<Object[]> RANGES =
      List.of(
          new Object[] {"gateway_in", 0.3, 0.5},
          new Object[] {"network_in", 0.5, 1.0},
          new Object[] {"queue", 10.0, 20.0},
          new Object[] {"prefill_cpu", 1.0, 3.0},
          new Object[] {"prefill_gpu", 25.0, 35.0},
          new Object[] {"first_sample", 0.3, 0.6},
          new Object[] {"network_out", 0.5, 1.0});

  static List<long[]> draw(long seed, int n) {
    Random random = new Random(seed);
    List<long[]> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long[] c = new long[TtftComponent.all().size()];
      for (Object[] r : RANGES) {
        double from = (double) r[1];
        double to = (double) r[2];
        c[TtftComponent.byId((String) r[0]).orElseThrow().ordinal()] =
            Math.round((from + random.nextDouble() * (to - from)) * MS);
      }
      rows.add(c);
    }
    return rows;
  }

  static List<long[]> shiftQueue(List<long[]> rows, long shiftNs) {
    return rows.stream()
        .map(
            r -> {
              long[] c = r.clone();
              c[QUEUE] += shiftNs;
              return c;
            })
        .toList();
  }

  static Sample sample(String label, List<long[]> rows) {
    Sample.Builder b = Sample.builder(label);
    for (long[] c : rows) {
      long ttft = Arrays.stream(c).sum();
      b.add(ttft, ttft, c);
    }
    return b.build();
  }

  static List<String> moving(Comparison c) {
    List<String> out = new ArrayList<>();
    for (Comparison.Quantity q : c.quantities()) {
      for (Comparison.Statistic s : q.statistics()) {
        if (s.verdict() != Verdict.NO_CHANGE) {
          out.add(q.name() + " " + s.name());
        }
      }
    }
    return out;
  }

  @Test
  void theQueueShiftedByFortyMsInEveryRequestIsTheChangeAndExplainsTtft() throws Exception {
    // the same draws on both sides, B's queue 40 ms longer in every request: every statistic of the
    // queue and of TTFT moves by exactly 40 ms, every other component by nothing
    List<long[]> rows = draw(1, 1200);
    Comparison c =
        SampleComparison.compare(
            sample("before", rows),
            sample("after", shiftQueue(rows, 40 * MS)),
            DiffOptions.defaults());
    for (String name : List.of("queue", "ttft", "server_ttft")) {
      for (Comparison.Statistic s : c.quantity(name).statistics()) {
        assertThat(s.verdict()).as("%s %s", name, s.name()).isEqualTo(Verdict.UP);
        assertThat(s.delta().estimate()).as("%s %s", name, s.name()).isCloseTo(FORTY, within(1e-3));
        assertThat(s.delta().low()).as("%s %s", name, s.name()).isLessThanOrEqualTo(FORTY);
        assertThat(s.delta().high()).as("%s %s", name, s.name()).isGreaterThanOrEqualTo(FORTY);
      }
    }
    assertThat(moving(c))
        .allMatch(
            m -> m.startsWith("queue ") || m.startsWith("ttft ") || m.startsWith("server_ttft "));
    assertThat(c.quantity("kv_transfer").zero()).isTrue();
    assertThat(c.quantity("prefill_gpu").zero()).isFalse();
    for (Comparison.Explanation e : c.explanations()) {
      assertThat(e.components())
          .as(e.over())
          .extracting(Comparison.Statistic::name)
          .containsExactly("queue");
      assertThat(e.explainedNs()).as(e.over()).isCloseTo(e.ttft().delta().estimate(), within(1e-3));
    }
    assertThat(c.explanations())
        .extracting(Comparison.Explanation::over)
        .containsExactly("mean", "p50", "p90", "p99");

    StringWriter text = new StringWriter();
    DiffText.print(c, new PrintWriter(text));
    assertThat(text.toString())
        .contains("explained by (mean): queue +40.000 ms of +40.000 ms")
        .contains("explained by (requests around p99, p98.5-p99.5): queue +40.000 ms of +40.000 ms")
        .contains(
            "(0 in every request on both sides: "
                + String.join(
                    ", ",
                    TtftComponent.all().stream()
                        .map(TtftComponent::id)
                        .filter(n -> RANGES.stream().noneMatch(r -> r[0].equals(n)))
                        .toList())
                + ")")
        .doesNotContain("server TTFT"); // no client layer: it is TTFT
    assertThat(text.toString().lines().filter(l -> l.startsWith("queue")).findFirst().orElseThrow())
        .contains("p50")
        .contains("+40.000")
        .endsWith("up");

    JsonNode json = new ObjectMapper().readTree(DiffJson.of(c));
    assertThat(json.at("/a/requests").asInt()).isEqualTo(1200);
    assertThat(json.at("/b/label").asText()).isEqualTo("after");
    JsonNode queue = null;
    for (JsonNode q : json.get("quantities")) {
      if (q.get("name").asText().equals("queue")) {
        queue = q;
      }
    }
    assertThat(queue.at("/statistics/1/name").asText()).isEqualTo("p90");
    assertThat(queue.at("/statistics/1/delta_ms").asDouble()).isCloseTo(40, within(1e-6));
    assertThat(queue.at("/statistics/1/low_ms").asDouble()).isLessThanOrEqualTo(40);
    assertThat(queue.at("/statistics/1/verdict").asText()).isEqualTo("up");
    assertThat(json.at("/explained_by/0/over").asText()).isEqualTo("mean");
    assertThat(json.at("/explained_by/0/components/0/name").asText()).isEqualTo("queue");
    assertThat(json.at("/explained_by/0/explained_ms").asDouble()).isCloseTo(40, within(1e-6));
    assertThat(json.at("/explained_by/3/band/0").asDouble()).isEqualTo(98.5);

    String html = DiffHtml.page(c);
    assertThat(html)
        .startsWith("<!DOCTYPE html>")
        .contains(
            "<table id=\"diff\"",
            "<svg id=\"deltas\"",
            "<ul id=\"explained\"",
            "<table id=\"stalls\"",
            "queue +40.000 ms of +40.000 ms")
        .doesNotContain("<script", "http://", "https://");
  }

  @Test
  void anIndependentSampleWithTheQueueShiftedMovesOnlyTheQueue() {
    // independent draws of the same ranges, n = 1200: the median of a 10 ms wide uniform range
    // varies by 10 / (2 sqrt(1200)) = 0.14 ms per side, a mean by 2.9 / sqrt(1200) = 0.08 ms, the
    // TTFT p99 (two 10 ms ranges: a triangular tail, density 0.014 per ms at p99) by
    // sqrt(0.0099 / 1200) / 0.014 = 0.2 ms; so a difference reaches the floor of 1 ms at over 3.5
    // standard deviations, and the queue's shift of 40 ms stays within 2 ms of 40
    Comparison c =
        SampleComparison.compare(
            sample("A", draw(2, 1200)),
            sample("B", shiftQueue(draw(3, 1200), 40 * MS)),
            DiffOptions.defaults());
    for (Comparison.Statistic s : c.quantity("queue").statistics()) {
      assertThat(s.verdict()).as(s.name()).isEqualTo(Verdict.UP);
      assertThat(s.delta().estimate()).as(s.name()).isCloseTo(FORTY, within(2.0 * MS));
      assertThat(s.delta().low()).as(s.name()).isGreaterThan(35.0 * MS);
      assertThat(s.delta().high()).as(s.name()).isLessThan(45.0 * MS);
    }
    assertThat(moving(c))
        .allMatch(
            m -> m.startsWith("queue ") || m.startsWith("ttft ") || m.startsWith("server_ttft "));
    Comparison.Explanation mean = c.explanations().get(0);
    assertThat(mean.ttft().verdict()).isEqualTo(Verdict.UP);
    assertThat(mean.components()).extracting(Comparison.Statistic::name).containsExactly("queue");
    // the others' mean changes (under 1 ms together) are the rest of TTFT's change
    assertThat(mean.explainedNs()).isCloseTo(mean.ttft().delta().estimate(), within(1.0 * MS));
  }

  @Test
  void samplesOfTheSameDistributionsShowNoChange() {
    // as above: at n = 1200 no statistic moves by the floor of 1 ms but for 3.5 standard deviations
    Comparison c =
        SampleComparison.compare(
            sample("A", draw(4, 1200)), sample("B", draw(5, 1200)), DiffOptions.defaults());
    assertThat(moving(c)).isEmpty();
    for (Comparison.Explanation e : c.explanations()) {
      assertThat(e.components()).as(e.over()).isEmpty();
      assertThat(DiffText.explanation(e)).contains("TTFT did not change beyond noise");
    }
    assertThat(c.stalls().shares())
        .singleElement()
        .satisfies(
            q -> {
              assertThat(q.name()).isEqualTo("stalled");
              assertThat(q.statistics().get(0).verdict()).isEqualTo(Verdict.NO_CHANGE);
            });
    assertThat(c.stalls().gaps()).isEmpty(); // no request has inter-token gaps
  }

  @Test
  void aChangeOfTheSlowestRequestsOnlyIsFoundAroundP99AndNotAroundP50() {
    // B: the same requests, the slowest 5% (by TTFT) queued 40 ms longer: they stay the slowest and
    // in order, so p99 moves by exactly 40 ms and p50 and p90 not at all; the mean by 5% of 40 ms
    List<long[]> rows = draw(6, 1200);
    Integer[] byTtft = IntStream.range(0, rows.size()).boxed().toArray(Integer[]::new);
    Arrays.sort(byTtft, Comparator.comparingLong(r -> Arrays.stream(rows.get(r)).sum()));
    List<long[]> after = new ArrayList<>(rows.stream().map(long[]::clone).toList());
    for (int rank = 1140; rank < 1200; rank++) {
      after.get(byTtft[rank])[QUEUE] += 40 * MS;
    }
    Comparison c =
        SampleComparison.compare(sample("A", rows), sample("B", after), DiffOptions.defaults());
    Comparison.Quantity ttft = c.quantity("ttft");
    assertThat(ttft.statistic("p99").delta().estimate()).isCloseTo(FORTY, within(1e-3));
    assertThat(ttft.statistic("p99").verdict()).isEqualTo(Verdict.UP);
    assertThat(ttft.statistic("p50").delta().estimate()).isZero();
    assertThat(ttft.statistic("p90").verdict()).isEqualTo(Verdict.NO_CHANGE);
    assertThat(ttft.statistic("mean").delta().estimate())
        .isCloseTo(60 * FORTY / 1200, within(1e-3));
    Comparison.Explanation mean = c.explanations().get(0);
    assertThat(mean.components()).extracting(Comparison.Statistic::name).containsExactly("queue");
    Comparison.Explanation p90 = c.explanations().get(2);
    assertThat(p90.over()).isEqualTo("p90");
    assertThat(p90.bandHigh()).isEqualTo(95); // ranks up to 0.95 * 1199 = 1139: none of the changed
    assertThat(p90.components()).isEmpty();
    Comparison.Explanation p99 = c.explanations().get(3);
    assertThat(p99.components()).extracting(Comparison.Statistic::name).containsExactly("queue");
    assertThat(p99.ttft().delta().estimate()).isCloseTo(FORTY, within(1e-3));
  }

  @Test
  void tooFewRequestsForAPercentileAreRefused() {
    assertThat(DiffOptions.requiredRequests(50)).isEqualTo(20);
    assertThat(DiffOptions.requiredRequests(90)).isEqualTo(100);
    assertThat(DiffOptions.requiredRequests(99)).isEqualTo(1000);
    assertThat(DiffOptions.requiredRequests(99.9)).isEqualTo(10000);
    Sample thousand = sample("A", draw(7, 1000));
    assertThatThrownBy(
            () ->
                SampleComparison.compare(
                    thousand, sample("version 1.5.0", draw(8, 999)), DiffOptions.defaults()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "side B (version 1.5.0) has 999 requests; p99 needs at least 1000 on each side")
        .hasMessageContaining("999 requests support p50, p90");
    assertThat(
            SampleComparison.compare(thousand, sample("B", draw(8, 1000)), DiffOptions.defaults())
                .quantities())
        .isNotEmpty();
    DiffOptions p90 = new DiffOptions(List.of(50d, 90d), MS, 0.01);
    assertThatThrownBy(() -> SampleComparison.compare(sample("A", draw(9, 99)), thousand, p90))
        .hasMessageContaining("side A (A) has 99 requests; p90 needs at least 100");
    assertThat(SampleComparison.compare(sample("A", draw(9, 100)), thousand, p90).explanations())
        .hasSize(3);
    assertThatThrownBy(() -> new DiffOptions(List.of(90d, 50d), MS, 0))
        .hasMessageContaining("go up");
    assertThatThrownBy(() -> new DiffOptions(List.of(100d), MS, 0))
        .hasMessageContaining("between 0 and 100");
    assertThatThrownBy(() -> new DiffOptions(List.of(50d), -1, 0))
        .hasMessageContaining("noise floor");
  }

  @Test
  void theShiftOfStallsAndTheirCausesIsMeasured() {
    // A: every 10th request has a slow step (its p99 gap 40 ms, else 12 ms); B: 3 of every 10 are
    // stalled by another request's prefill. Shares 10% -> 30%; mean p99 gap 14.8 ms -> 20.4 ms.
    List<long[]> rows = draw(10, 1000);
    Sample.Builder a = Sample.builder("A");
    Sample.Builder b = Sample.builder("B");
    for (int i = 0; i < rows.size(); i++) {
      long[] c = rows.get(i);
      long ttft = Arrays.stream(c).sum();
      boolean slow = i % 10 == 0;
      boolean stalled = i % 10 < 3;
      a.add(
          ttft,
          ttft,
          c,
          8,
          10 * MS,
          slow ? 40 * MS : 12 * MS,
          slow ? 1 : 0,
          slow ? "slow step" : "");
      b.add(
          ttft,
          ttft,
          c,
          8,
          10 * MS,
          stalled ? 40 * MS : 12 * MS,
          stalled ? 1 : 0,
          stalled ? "stalled by another request's prefill" : "");
    }
    Comparison c = SampleComparison.compare(a.build(), b.build(), DiffOptions.defaults());
    assertThat(c.stalls().shares())
        .extracting(Comparison.Quantity::name)
        .containsExactly(
            "stalled", "top cause: stalled by another request's prefill", "top cause: slow step");
    Comparison.Statistic stalled = c.stalls().shares().get(0).statistics().get(0);
    assertThat(stalled.a()).isCloseTo(0.1, within(1e-12));
    assertThat(stalled.b()).isCloseTo(0.3, within(1e-12));
    assertThat(stalled.verdict()).isEqualTo(Verdict.UP);
    assertThat(c.stalls().shares().get(1).statistics().get(0).verdict()).isEqualTo(Verdict.UP);
    assertThat(c.stalls().shares().get(2).statistics().get(0).verdict()).isEqualTo(Verdict.DOWN);
    assertThat(c.stalls().gaps())
        .extracting(Comparison.Quantity::name)
        .containsExactly("itl_p50", "itl_p99");
    assertThat(c.stalls().gaps().get(0).statistics().get(0).verdict()).isEqualTo(Verdict.NO_CHANGE);
    Comparison.Statistic p99 = c.stalls().gaps().get(1).statistics().get(0);
    assertThat(p99.a()).isCloseTo(14.8 * MS, within(1e-3));
    assertThat(p99.delta().estimate()).isCloseTo(5.6 * MS, within(1e-3));
    assertThat(p99.verdict()).isEqualTo(Verdict.UP);
    assertThat(moving(c)).isEmpty(); // TTFT and its components are the same requests'
  }

  @Test
  void aRowWhoseComponentsDoNotAddUpIsRefused() {
    long[] c = new long[TtftComponent.all().size()];
    c[QUEUE] = 5;
    assertThatThrownBy(() -> Sample.builder("store /x").add(6, 6, c))
        .hasMessageContaining("store /x: request 1's components sum to 5 ns, its TTFT is 6 ns");
  }
}
