package dev.llmlat.attribution;

import static dev.llmlat.attribution.Spans.MS;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ClockSkewEstimatorTest {

  /**
   * Requests over 100 s whose engine host clock is off by skew(t) = offset + drift·t; network
   * delays 0.5–3 ms each way, drawn independently (so single pairs are wrong by up to 1.25 ms).
   */
  static List<SpanRecord> skewed(double offsetMs, double driftMsPerSecond, long seed) {
    Random r = new Random(seed);
    List<SpanRecord> spans = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
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
      spans.add(Spans.span(t, Spans.id(1), "POST /v1/chat/completions", start, clientEnd + 1).gateway().kind("Server").build());
      spans.add(Spans.span(t, Spans.id(2), "POST", clientStart, clientEnd).gateway().kind("Client").parent(Spans.id(1)).build());
      spans.add(Spans.span(t, Spans.id(3), "llm_request", serverStart + skew, serverEnd + skew).kind("Server").parent(Spans.id(2)).build());
    }
    return spans;
  }

  @ParameterizedTest
  @CsvSource({"50, 0", "-50, 0", "50, 0.2", "-50, -0.3", "0.2, 0"})
  void recoversInjectedSkewWithinOneMillisecond(double offsetMs, double driftMsPerSecond) {
    List<SpanRecord> spans = skewed(offsetMs, driftMsPerSecond, 42);
    ClockCorrection c = ClockSkewEstimator.estimate(spans).get("engine-host");
    for (double atSeconds : new double[] {0, 50, 99}) {
      long t = Spans.BASE + Math.round(atSeconds * 1e9);
      double expected = -(offsetMs + driftMsPerSecond * atSeconds) * MS;
      if (Math.abs(offsetMs) >= 1) {
        assertThat(c.applied()).isTrue();
        assertThat((double) c.offsetAt(t)).as("at %s s", atSeconds).isCloseTo(expected, org.assertj.core.data.Offset.offset(1.0 * MS));
      }
    }
    assertThat(c.pairs()).isEqualTo(200);
    assertThat(c.uncertaintyNs()).isLessThan(2 * MS);
  }

  @Test
  void alignedSpansGiveTheTrueNetworkTime() {
    List<SpanRecord> spans = skewed(50, 0.1, 7);
    for (Attribution a : TraceAttribution.attribute(spans)) {
      // true network_in is 0.5..3 ms; with a 50 ms skew uncorrected it would be ~53 ms
      assertThat(a.component("network_in")).isBetween(0L, 5 * MS);
    }
  }

  @Test
  void aSmallOffsetWithinItsUncertaintyIsReportedButNotApplied() {
    List<SpanRecord> spans = skewed(0.05, 0, 3);
    ClockCorrection c = ClockSkewEstimator.estimate(spans).get("engine-host");
    assertThat(c.applied()).isFalse();
    assertThat(c.note()).contains("within its uncertainty");
    assertThat(c.offsetAt(Spans.BASE)).isZero();
  }

  @Test
  void sameHostNeedsNoCorrection() {
    List<SpanRecord> spans = new ArrayList<>();
    for (SpanRecord s : skewed(0, 0, 1)) {
      spans.add(new SpanRecord(s.traceId(), s.spanId(), s.parentSpanId(), s.name(), s.kind(), s.service(), s.layer(), "one-host",
          s.startNs(), s.endNs(), s.attributes(), s.events(), s.links()));
    }
    assertThat(ClockSkewEstimator.estimate(spans)).containsOnlyKeys("one-host");
  }
}
