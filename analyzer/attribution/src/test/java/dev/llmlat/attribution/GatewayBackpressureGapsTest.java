package dev.llmlat.attribution;

import static dev.llmlat.attribution.Spans.MS;
import static dev.llmlat.attribution.Spans.id;
import static dev.llmlat.attribution.Spans.span;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Inter-token gaps as the client saw them when the gateway could not write to its client. The
 * request is {@link TtftAttributorTest#oneRequest()}'s (first token at 290 ms on the engine, the
 * gateway's first chunk at 300 ms: a token reaches the gateway 10 ms after the engine produced it)
 * with ten decode tokens 10 ms apart but one 60 ms slow step: tokens at 290, 300, 310, 320, 330,
 * 340, 350, 360, 420, 430, 440 ms.
 */
class GatewayBackpressureGapsTest {
  static final String T = TtftAttributorTest.T;
  static final String OTHER = TtftAttributorTest.OTHER;
  static final String DELTAS =
      "[10000000,10000000,10000000,10000000,10000000,10000000,10000000,60000000,10000000,10000000]";

  /**
   * The request with the gateway's SERVER span carrying these spans' attributes and (start ms,
   * duration ms) blocks.
   */
  static List<SpanRecord> request(Map<String, Object> serverAttrs, double[]... blocks) {
    return request(serverAttrs, null, blocks);
  }

  /** As {@link #request(Map, double[]...)}, each block saying {@code cause} was full (or none). */
  static List<SpanRecord> request(
      Map<String, Object> serverAttrs, String cause, double[]... blocks) {
    List<SpanRecord> s = TtftAttributorTest.oneRequest();
    Spans.B server =
        span(T, id(1), "POST /v1/chat/completions", 0, 1000)
            .gateway()
            .kind("Server")
            .event("gen_ai.first_chunk", 300);
    serverAttrs.forEach(server::attr);
    for (double[] b : blocks) {
      String duration = String.valueOf(Math.round(b[1] * MS));
      server.event(
          LlmlatAttributes.EVENT_GATEWAY_BACKPRESSURE,
          b[0],
          cause == null
              ? Map.of(LlmlatAttributes.GATEWAY_BACKPRESSURE_DURATION_NS, duration)
              : Map.of(
                  LlmlatAttributes.GATEWAY_BACKPRESSURE_DURATION_NS,
                  duration,
                  LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE,
                  cause));
    }
    s.set(0, server.build());
    s.set(
        7,
        span(T, id(6), "decode", 290, 980)
            .parent(id(3))
            .attr("llmlat.decode.token_deltas_ns", DELTAS)
            .build());
    return s;
  }

  static Attribution attribute(List<SpanRecord> spans) {
    Attribution a = TraceAttribution.attribute(spans).get(0);
    assertThat(a.corrections())
        .noneMatch(ClockCorrection::applied); // times below are read on one clock
    return a;
  }

  static List<Long> ms(long... values) {
    return java.util.Arrays.stream(values).map(v -> v * MS).boxed().toList();
  }

  @Test
  void aSlowReadersGapIsTheGatewaysAndTheEnginesSlowStepStaysTheEngines() {
    // the gateway blocked from 325 to 365 ms on its clock: tokens reaching it then (produced
    // 315..355 ms on the engine:
    // 320, 330, 340 and 350) went out at 355 ms. Gaps 10 10 45 0 0 0 5 60 10 10, median 10.
    Attribution a =
        attribute(
            request(
                Map.of(
                    LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT,
                    1,
                    LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS,
                    40 * MS),
                new double[] {325, 40}));
    assertThat(a.itl())
        .extracting(Attribution.Gap::gapNs)
        .containsExactlyElementsOf(ms(10, 10, 45, 0, 0, 0, 5, 60, 10, 10));
    // token 3, produced at 320 ms, waited 35 ms of its 45 ms gap for the gateway; 2 x 35 >= the
    // excess of 35
    Attribution.Gap held = a.itl().get(2);
    assertThat(held.index()).isEqualTo(3);
    assertThat(held.startNs()).isEqualTo(Spans.BASE + 310 * MS);
    assertThat(held.backpressureNs()).isEqualTo(35 * MS);
    assertThat(held.cause())
        .isEqualTo("the gateway could not write to its client (the client read slowly), 35.0 ms");
    // the engine's 60 ms step, after the block: its own cause, nothing of it the gateway's
    Attribution.Gap slow = a.itl().get(7);
    assertThat(slow.startNs()).isEqualTo(Spans.BASE + 360 * MS);
    assertThat(slow.backpressureNs()).isZero();
    assertThat(slow.cause()).isEqualTo("slow step (60.0 ms)");
    // the tokens that went out together with token 3 waited too, but made no gap
    assertThat(a.itl())
        .extracting(Attribution.Gap::backpressureNs)
        .containsExactlyElementsOf(ms(0, 0, 35, 0, 0, 0, 0, 0, 0, 0));
    assertThat(a.itl().stream().filter(g -> !g.cause().isEmpty()).count()).isEqualTo(2);
    assertThat(a.notes()).noneMatch(n -> n.contains("could not write"));
  }

  @Test
  void aGapNamesWhatWasFullWhereTheGatewaySaysIt() {
    // the same block as above, as an HTTP/2 gateway records it: the stream's window was full
    Map<String, Object> attrs =
        Map.of(
            LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT,
            1,
            LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS,
            40 * MS);
    assertThat(
            attribute(request(attrs, "http2_stream_window", new double[] {325, 40}))
                .itl()
                .get(2)
                .cause())
        .isEqualTo(
            "the gateway could not write to its client (the request's HTTP/2 stream window was"
                + " full: the client read slowly), 35.0 ms");
    assertThat(attribute(request(attrs, "socket", new double[] {325, 40})).itl().get(2).cause())
        .isEqualTo(
            "the gateway could not write to its client (its socket to the client was full: the"
                + " client read slowly), 35.0 ms");
    assertThat(
            attribute(request(attrs, "http2_connection_window", new double[] {325, 40}))
                .itl()
                .get(2)
                .cause())
        .isEqualTo(
            "the gateway could not write to its client (the HTTP/2 connection's window was full:"
                + " the client read its streams slowly), 35.0 ms");
    // a value this analyzer does not know reads as unknown
    assertThat(attribute(request(attrs, "quic", new double[] {325, 40})).itl().get(2).cause())
        .isEqualTo("the gateway could not write to its client (the client read slowly), 35.0 ms");
  }

  @Test
  void withoutBackpressureEventsTheGapsAreTheEnginesTokenTimes() {
    for (Map<String, Object> attrs :
        List.<Map<String, Object>>of(
            Map.of(), Map.of(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT, 0))) {
      Attribution a = attribute(request(attrs));
      assertThat(a.itl())
          .extracting(Attribution.Gap::gapNs)
          .containsExactlyElementsOf(ms(10, 10, 10, 10, 10, 10, 10, 60, 10, 10));
      assertThat(a.itl())
          .extracting(Attribution.Gap::startNs)
          .containsExactlyElementsOf(
              ms(290, 300, 310, 320, 330, 340, 350, 360, 420, 430).stream()
                  .map(t -> Spans.BASE + t)
                  .toList());
      assertThat(a.itl()).allMatch(g -> g.backpressureNs() == 0);
      assertThat(a.itl())
          .extracting(Attribution.Gap::cause)
          .containsExactly("", "", "", "", "", "", "", "slow step (60.0 ms)", "", "");
    }
  }

  @Test
  void aBlockOverLessThanHalfTheExcessLeavesTheEnginesCause() {
    // another request's 2048-token prefill runs 362..418 ms; the gateway blocked 425..435 ms on its
    // clock, holding
    // the token produced at 420 until 425: gap 65 ms (median 10, excess 55), 5 ms of it the
    // gateway's, 2 x 5 < 55
    List<SpanRecord> s = request(Map.of(), new double[] {425, 10});
    s.add(
        span(OTHER, id(20), "step", 362, 418)
            .attr("llmlat.step.prefill_tokens", 2048)
            .attr("llmlat.step.batch_size", 1)
            .attr("llmlat.trace_ids", "[\"" + OTHER + "\"]")
            .build());
    Attribution a = attribute(s);
    assertThat(a.itl())
        .extracting(Attribution.Gap::gapNs)
        .containsExactlyElementsOf(ms(10, 10, 10, 10, 10, 10, 10, 65, 5, 10));
    Attribution.Gap stalled = a.itl().get(7);
    assertThat(stalled.backpressureNs()).isEqualTo(5 * MS);
    assertThat(stalled.cause())
        .isEqualTo("stalled by prefill of request " + OTHER + " (2048 tokens)");
  }

  @Test
  void anEngineStallWhoseTokenTheGatewayHeldNamesTheEnginesPartOfTheGap() {
    // the same 5 ms hold on the 60 ms slow step, without the other request: the engine's part is 60
    // of the 65 ms
    Attribution a = attribute(request(Map.of(), new double[] {425, 10}));
    assertThat(a.itl().get(7).cause()).isEqualTo("slow step (60.0 ms)");
    assertThat(a.itl().get(7).gapNs()).isEqualTo(65 * MS);
  }

  @Test
  void blocksBeyondTheRecordedEventsAreSaidToBeUnplaced() {
    // the span counted 40 blocks, 100 ms in all; one event (40 ms) kept: 60 ms are not placed in
    // time. The slow step's
    // gap ends after the recorded block (355 ms on the engine's times), the held gap does not.
    Attribution a =
        attribute(
            request(
                Map.of(
                    LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT,
                    40,
                    LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS,
                    100 * MS),
                new double[] {325, 40}));
    assertThat(a.itl().get(2).cause())
        .isEqualTo("the gateway could not write to its client (the client read slowly), 35.0 ms");
    assertThat(a.itl().get(7).cause())
        .isEqualTo(
            "slow step (60.0 ms); only the first 1 of the gateway's 40 blocks writing to its client"
                + " were recorded, 60.0 ms of blocking after them is not placed");
    assertThat(a.notes())
        .contains(
            "the gateway could not write to its client 40 times; only the first 1 were recorded as events,"
                + " 60.0 ms of blocking after them is not placed in time: inter-token gaps after the last recorded one do not show the gateway's part");
  }

  @Test
  void overlappingBlocksHoldATokenUntilTheLastEnds() {
    // two blocks 325..345 and 340..365 on the gateway's clock are one, 315..355 on the engine's: as
    // a single 40 ms block
    Attribution a = attribute(request(Map.of(), new double[] {340, 25}, new double[] {325, 20}));
    assertThat(a.itl())
        .extracting(Attribution.Gap::gapNs)
        .containsExactlyElementsOf(ms(10, 10, 45, 0, 0, 0, 5, 60, 10, 10));
    assertThat(a.itl().get(2).backpressureNs()).isEqualTo(35 * MS);
  }

  @Test
  void aTokenProducedAsABlockBeginsWaitsAndOneProducedAsItEndsDoesNot() {
    List<GatewayBackpressure.Block> blocks =
        List.of(new GatewayBackpressure.Block(10, 20), new GatewayBackpressure.Block(30, 40));
    assertThat(ItlAnalyzer.delivered(new long[] {5, 10, 19, 20, 35, 40, 41}, blocks))
        .containsExactly(5, 20, 20, 20, 40, 40, 41);
    // out of order (an engine's times): each token is still placed by its own time, and never goes
    // out before the one before
    assertThat(ItlAnalyzer.delivered(new long[] {35, 12, 50}, blocks)).containsExactly(40, 40, 50);
  }
}
