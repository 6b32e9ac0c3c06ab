package dev.llmlat.attribution;

import static dev.llmlat.attribution.Spans.MS;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ClockSkewEstimatorTest {
  /** Requests {@link #skewed} makes: one client/server pair across the two hosts each. */
  static final int REQUESTS = 200;

  /** The hosts of {@link #skewed}'s spans: the gateway's (the reference) and the engine's. */
  static final String GATEWAY_HOST = "gw-host";

  static final String ENGINE_HOST = "engine-host";

  /**
   * The engine host's correction, failing unless the estimator gave one per host of the input,
   * relative to the gateway's.
   */
  static ClockCorrection engineCorrection(List<SpanRecord> spans) {
    Map<String, ClockCorrection> corrections = ClockSkewEstimator.estimate(spans);
    assertThat(corrections).containsOnlyKeys(GATEWAY_HOST, ENGINE_HOST);
    ClockCorrection c = corrections.get(ENGINE_HOST);
    assertThat(c.host()).isEqualTo(ENGINE_HOST);
    assertThat(c.relativeTo()).isEqualTo(GATEWAY_HOST);
    assertThat(c.pairs()).as("round trips used").isEqualTo(REQUESTS);
    return c;
  }

  /**
   * Requests over 100 s whose engine host clock is off by skew(t) = offset + drift·t; network
   * delays 0.5–3 ms each way, drawn independently (so single pairs are wrong by up to 1.25 ms).
   */
  static List<SpanRecord> skewed(double offsetMs, double driftMsPerSecond, long seed) {
    Random r = new Random(seed);
    List<SpanRecord> spans = new ArrayList<>();
    for (int i = 0; i < REQUESTS; i++) {
      String t = Spans.trace(i);
      double start = i * 500.0;
      double in = 0.5 + 2.5 * r.nextDouble();
      double out = 0.5 + 2.5 * r.nextDouble();
      double server = 20 + 40 * r.nextDouble();
      double clientStart = start + 1;
      double serverStart = clientStart + in;
      double serverEnd = serverStart + server;
      double clientEnd = serverEnd + out;
      double skew = offsetMs + driftMsPerSecond * (serverStart / 1000.0);
      spans.add(
          Spans.span(t, Spans.id(1), "POST /v1/chat/completions", start, clientEnd + 1)
              .gateway()
              .kind("Server")
              .build());
      spans.add(
          Spans.span(t, Spans.id(2), "POST", clientStart, clientEnd)
              .gateway()
              .kind("Client")
              .parent(Spans.id(1))
              .build());
      spans.add(
          Spans.span(t, Spans.id(3), "llm_request", serverStart + skew, serverEnd + skew)
              .kind("Server")
              .parent(Spans.id(2))
              .build());
    }
    return spans;
  }

  @ParameterizedTest
  @CsvSource({"50, 0", "-50, 0", "50, 0.2", "-50, -0.3", "0.2, 0"})
  void recoversInjectedSkewWithinOneMillisecond(double offsetMs, double driftMsPerSecond) {
    List<SpanRecord> spans = skewed(offsetMs, driftMsPerSecond, 42);
    ClockCorrection c = engineCorrection(spans);
    if (Math.abs(offsetMs) >= 1) {
      assertThat(c.applied()).isTrue();
    }
    // applied or not (a 0.2 ms offset may be within its uncertainty), the offset is right to 1 ms
    for (double atSeconds : new double[] {0, 50, 99}) {
      long t = Spans.BASE + Math.round(atSeconds * 1e9);
      double expected = -(offsetMs + driftMsPerSecond * atSeconds) * MS;
      assertThat((double) c.offsetAt(t))
          .as("at %s s", atSeconds)
          .isCloseTo(expected, org.assertj.core.data.Offset.offset(1.0 * MS));
    }
    assertThat(c.uncertaintyNs()).isLessThan(2 * MS);
  }

  @Test
  void alignedSpansGiveTheTrueNetworkTime() {
    List<SpanRecord> spans = skewed(50, 0.1, 7);
    List<Attribution> attributions = TraceAttribution.attribute(spans);
    assertThat(attributions).as("one attribution per request").hasSize(REQUESTS);
    for (Attribution a : attributions) {
      // true network_in is 0.5..3 ms; with a 50 ms skew uncorrected it would be ~53 ms
      assertThat(a.component("network_in")).isBetween(0L, 5 * MS);
    }
  }

  @Test
  void aSmallOffsetWithinItsUncertaintyIsReportedButNotApplied() {
    List<SpanRecord> spans = skewed(0.05, 0, 3);
    ClockCorrection c = engineCorrection(spans);
    assertThat(c.applied()).isFalse();
    assertThat(c.note()).contains("within its uncertainty");
    assertThat(c.offsetAt(Spans.BASE)).isZero();
  }

  @Test
  void sameHostNeedsNoCorrection() {
    List<SpanRecord> spans = new ArrayList<>();
    for (SpanRecord s : skewed(0, 0, 1)) {
      spans.add(
          new SpanRecord(
              s.traceId(),
              s.spanId(),
              s.parentSpanId(),
              s.name(),
              s.kind(),
              s.service(),
              s.layer(),
              "one-host",
              s.startNs(),
              s.endNs(),
              s.attributes(),
              s.events(),
              s.links()));
    }
    Map<String, ClockCorrection> corrections = ClockSkewEstimator.estimate(spans);
    assertThat(corrections).containsOnlyKeys("one-host");
    ClockCorrection c = corrections.get("one-host");
    assertThat(c.relativeTo()).isEqualTo("one-host");
    assertThat(c.applied()).isFalse();
    assertThat(c.pairs()).isZero();
    assertThat(c.offsetAt(Spans.BASE)).isZero();
  }
}
