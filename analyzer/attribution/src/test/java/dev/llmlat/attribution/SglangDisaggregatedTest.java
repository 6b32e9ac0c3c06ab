package dev.llmlat.attribution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.semconv.TtftComponent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * SGLang PD (engine-traces/disaggregated.md, section 1): the router sends each request to a prefill
 * and a decode server at once, both given the same {@code bootstrap_room}. Each server writes its
 * own root, {@code "prefill Req <rid8>"} / {@code "decode Req <rid8>"}, a scheduler thread span and
 * the PD stage slices. The decode server waits for KV memory ({@code decode_bootstrap}), then for
 * the KV cache ({@code decode_transferred}) while the prefill server prefills and sends it ({@code
 * prefill_transfer_kv_cache}), then for its first batch ({@code decode_waiting}), and replays the
 * prefill's first token ({@code fake_output}).
 *
 * <p>Behind a Java gateway (the agent's SERVER and CLIENT spans) and a router that forwards the
 * traceparent without tracing itself, both roots are children of the gateway's CLIENT span: one
 * trace. The two servers' hosts run clocks 50 ms ahead and 50 ms behind the gateway's. Without any
 * traceparent each root starts its own 64-bit trace and only the room joins them. Each request's
 * truth is written into the fixture on the gateway's clock.
 */
class SglangDisaggregatedTest {
  private static final long MS = 1_000_000;
  private static final long US = 1_000;
  private static final long BASE = 1_795_946_400_000_000_000L;
  private static final long PREFILL_SKEW = 50 * MS;
  private static final long DECODE_SKEW = -50 * MS;

  record Truth(String traceId, long ttft, Map<String, Long> components) {}

  private record Fixture(List<SpanRecord> spans, List<Truth> truths) {}

  /**
   * @param gateway whether a gateway's spans are on the trace (else: no traceparent, one trace per
   *     server)
   */
  private static Fixture fixture(int n, boolean gateway, long prefillSkew, long decodeSkew) {
    List<SpanRecord> spans = new ArrayList<>();
    List<Truth> truths = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String trace = String.format("%032x", 0x5e1000L + i);
      String prefillTrace = gateway ? trace : String.format("%016x%016x", 0, 0x71000L + i);
      String decodeTrace = gateway ? trace : String.format("%016x%016x", 0, 0x72000L + i);
      String room = "0x" + Long.toHexString(0x1f3a9c0d2e4b5a00L + i);
      String server = String.format("%016x", 0x1000L + i);
      String call = String.format("%016x", 0x2000L + i);
      long s = BASE + i * 400 * MS;
      long callStart = s + MS;
      // the router adds half a millisecond on the way in, to both servers
      long pArr = callStart + 500 * US;
      long dArr = callStart + 600 * US;
      long pPrepared = pArr + 400 * US;
      long pBootstrapped = pPrepared + (2 + (i % 3) * 4) * MS;
      long pScheduled = pBootstrapped + (i % 4) * 6 * MS;
      long pFirst = pScheduled + (30 + 3 * i) * MS;
      // every third request: the decode server had no KV memory free until 12 ms after the prefill
      // was done
      long dPrepared = dArr + 400 * US;
      long dBootstrapped = i % 3 == 2 ? pFirst + 12 * MS : dPrepared + 3 * MS;
      long wireStart = Math.max(pFirst, dBootstrapped);
      long wire = (4 + (i % 2) * 3) * MS;
      long pSent = wireStart + wire;
      long pEnd = pSent + 200 * US;
      long dReceived = pSent + 300 * US;
      long dScheduled = dReceived + (i % 2) * 5 * MS;
      long dFirst = dScheduled + 800 * US;
      long[] loops = new long[12];
      for (int k = 0; k < loops.length; k++) {
        loops[k] = dFirst + (k + 1) * 9 * MS;
      }
      long dEnd = loops[loops.length - 1] + 300 * US;
      long firstChunk = dFirst + 600 * US; // decode server -> router -> gateway -> its client
      long callEnd = dFirst + 400 * US; // the response headers came with the first token
      long sEnd = dEnd + MS;
      String parent = gateway ? call : "";
      if (gateway) {
        spans.add(Spans.gatewayServer(trace, server, s, sEnd, firstChunk));
        spans.add(Spans.gatewayCall(trace, call, server, callStart, callEnd, "sgl-router"));
      }
      String rid = String.format("%08x9d2e4b5a68c1", 0x5c2e0000 + i);
      String pThread = String.format("%016x", 0x3000L + i);
      spans.addAll(
          shifted(
              server(
                  prefillTrace,
                  String.format("%016x", 0x4000L + i),
                  parent,
                  "prefill",
                  rid,
                  room,
                  "prefill-host",
                  pThread,
                  "Prefill Scheduler",
                  pArr,
                  pEnd,
                  List.of(
                      slice(
                          prefillTrace,
                          0x41,
                          i,
                          pThread,
                          "prefill_prepare",
                          pArr + 100 * US,
                          pPrepared,
                          "prefill-host"),
                      slice(
                          prefillTrace,
                          0x42,
                          i,
                          pThread,
                          "prefill_bootstrap",
                          pPrepared,
                          pBootstrapped,
                          "prefill-host"),
                      slice(
                          prefillTrace,
                          0x43,
                          i,
                          pThread,
                          "prefill_waiting",
                          pBootstrapped,
                          pScheduled,
                          "prefill-host"),
                      slice(
                          prefillTrace,
                          0x44,
                          i,
                          pThread,
                          "prefill_forward",
                          pScheduled,
                          pFirst,
                          "prefill-host"),
                      slice(
                          prefillTrace,
                          0x45,
                          i,
                          pThread,
                          "prefill_transfer_kv_cache",
                          pFirst,
                          pSent,
                          "prefill-host"))),
              prefillSkew));
      String dThread = String.format("%016x", 0x5000L + i);
      String forward = String.format("%016x", 0x5400L + i);
      List<SpanRecord> dSlices =
          new ArrayList<>(
              List.of(
                  slice(
                      decodeTrace,
                      0x51,
                      i,
                      dThread,
                      "decode_prepare",
                      dArr + 100 * US,
                      dPrepared,
                      "decode-host"),
                  slice(
                      decodeTrace,
                      0x52,
                      i,
                      dThread,
                      "decode_bootstrap",
                      dPrepared,
                      dBootstrapped,
                      "decode-host"),
                  slice(
                      decodeTrace,
                      0x53,
                      i,
                      dThread,
                      "decode_transferred",
                      dBootstrapped,
                      dReceived,
                      "decode-host"),
                  slice(
                      decodeTrace,
                      0x54,
                      i,
                      dThread,
                      "decode_waiting",
                      dReceived,
                      dScheduled,
                      "decode-host"),
                  new SpanRecord(
                      decodeTrace,
                      forward,
                      dThread,
                      "decode_forward",
                      "Internal",
                      "sglang",
                      "",
                      "decode-host",
                      "sglang server",
                      "",
                      dScheduled,
                      loops[loops.length - 1],
                      Map.of(),
                      List.of(),
                      List.of()),
                  slice(
                      decodeTrace,
                      0x56,
                      i,
                      forward,
                      "fake_output",
                      dScheduled,
                      dFirst,
                      "decode-host")));
      for (int k = 0; k < loops.length; k++) {
        dSlices.add(
            new SpanRecord(
                decodeTrace,
                String.format("%016x", 0x6000L + i * 64 + k),
                forward,
                "decode_loop",
                "Internal",
                "sglang",
                "",
                "decode-host",
                "sglang server",
                "",
                k == 0 ? dFirst : loops[k - 1],
                loops[k],
                Map.of("decode_ct", Integer.toString(k)),
                List.of(),
                List.of()));
      }
      spans.addAll(
          shifted(
              server(
                  decodeTrace,
                  String.format("%016x", 0x7000L + i),
                  parent,
                  "decode",
                  rid,
                  room,
                  "decode-host",
                  dThread,
                  "Decode Scheduler",
                  dArr,
                  dEnd,
                  dSlices),
              decodeSkew));

      Map<String, Long> c = new HashMap<>();
      long t0 = gateway ? s : pArr;
      if (gateway) {
        c.put("gateway_in", callStart - s);
        c.put("network_in", pArr - callStart);
        c.put("network_out", firstChunk - dFirst);
      }
      c.put("engine_in", pPrepared - pArr);
      // the prefill server's bootstrap and waiting queues, then the decode server's wait for its
      // first batch
      c.put("queue", (pScheduled - pPrepared) + (dScheduled - pSent));
      c.put("prefill_gpu", pFirst - pScheduled); // no GPU layer: the forward counts as GPU time
      c.put("decode_wait", wireStart - pFirst);
      c.put("kv_transfer", wire);
      c.put("first_sample", dFirst - dScheduled);
      truths.add(new Truth(gateway ? trace : decodeTrace, (gateway ? firstChunk : dFirst) - t0, c));
    }
    return new Fixture(spans, truths);
  }

  /** One server's root (tokenizer process) and scheduler thread span, with the thread's slices. */
  private static List<SpanRecord> server(
      String trace,
      String rootId,
      String parent,
      String role,
      String rid,
      String room,
      String host,
      String threadId,
      String label,
      long start,
      long end,
      List<SpanRecord> slices) {
    List<SpanRecord> out = new ArrayList<>();
    out.add(
        new SpanRecord(
            trace,
            rootId,
            parent,
            role + " Req " + rid.substring(0, 8),
            "Internal",
            "sglang",
            "",
            host,
            "sglang server",
            "",
            start,
            end,
            Map.of(
                "rid",
                rid,
                "module",
                "sglang::request",
                "bootstrap_room",
                room,
                "gen_ai.usage.prompt_tokens",
                "2048",
                "gen_ai.usage.completion_tokens",
                role.equals("prefill") ? "1" : "13"),
            List.of(),
            List.of()));
    out.add(
        new SpanRecord(
            trace,
            threadId,
            rootId,
            label + " [TP 0] (host:" + host.substring(0, 6) + " | pid:4242)",
            "Internal",
            "sglang",
            "",
            host,
            "sglang server",
            "",
            start,
            end,
            Map.of(
                "thread_label",
                label,
                "tp_rank",
                "0",
                "host_id",
                host + "-machine-id",
                "pid",
                "4242"),
            List.of(),
            List.of()));
    out.addAll(slices);
    return out;
  }

  private static SpanRecord slice(
      String trace,
      int kind,
      int i,
      String parent,
      String name,
      long start,
      long end,
      String host) {
    return new SpanRecord(
        trace,
        String.format("%016x", ((long) kind << 32) + i),
        parent,
        name,
        "Internal",
        "sglang",
        "",
        host,
        "sglang server",
        "",
        start,
        end,
        Map.of(),
        List.of(),
        List.of());
  }

  private static List<SpanRecord> shifted(List<SpanRecord> spans, long skew) {
    return spans.stream().map(x -> x.shifted(skew)).toList();
  }

  private static void assertMatchesTruth(Fixture f, List<Attribution> result, long tolerance) {
    assertThat(result).hasSize(f.truths().size()); // one per request, not one per server
    Map<String, Attribution> byTrace = new HashMap<>();
    result.forEach(a -> byTrace.put(a.traceId(), a));
    for (Truth t : f.truths()) {
      Attribution a = byTrace.get(t.traceId());
      assertThat(a).as("attribution of %s among %s", t.traceId(), byTrace.keySet()).isNotNull();
      assertThat(a.engineAdapter()).isEqualTo("SGLang");
      assertThat(a.disaggregated()).isTrue();
      assertThat(Math.abs(a.ttftNs() - t.ttft()))
          .as("TTFT of %s: %s", t.traceId(), a.components())
          .isLessThanOrEqualTo(tolerance);
      for (String c : TtftComponent.ids()) {
        long truth = t.components().getOrDefault(c, 0L);
        assertThat(Math.abs(a.component(c) - truth))
            .as("%s of %s: %s", c, t.traceId(), a.components())
            .isLessThanOrEqualTo(tolerance);
      }
      assertThat(a.instancesOf("decode_wait"))
          .extracting(Attribution.InstancePart::instance)
          .allMatch(x -> x.contains("decode"));
      assertThat(a.instancesOf("kv_transfer"))
          .extracting(Attribution.InstancePart::role)
          .containsOnly("transfer");
      String largest =
          a.components().entrySet().stream()
              .max(Map.Entry.comparingByValue())
              .orElseThrow()
              .getKey();
      String truthLargest =
          t.components().entrySet().stream()
              .max(Map.Entry.comparingByValue())
              .orElseThrow()
              .getKey();
      assertThat(largest).as("largest component of %s", t.traceId()).isEqualTo(truthLargest);
    }
  }

  @Test
  void behindAGatewayBothServersAreOneRequestAlignedAndSplit() {
    Fixture f = fixture(12, true, PREFILL_SKEW, DECODE_SKEW);
    List<Attribution> result = TraceAttribution.attribute(f.spans());
    // the gateway's calls bound the skew to the router's half millisecond each way
    assertMatchesTruth(f, result, MS);
    Attribution a = result.get(0);
    assertThat(a.notes())
        .anyMatch(
            n -> n.startsWith("disaggregated (SGLang's prefill/decode root spans): prefill on "));
    assertThat(a.corrections())
        .filteredOn(ClockCorrection::applied)
        .extracting(ClockCorrection::host)
        .containsExactlyInAnyOrder("prefill-host", "decode-host");
    assertThat(a.criticalPath())
        .filteredOn(s -> s.component().equals("kv_transfer"))
        .extracting(Attribution.Segment::span)
        .containsOnly("prefill_transfer_kv_cache and decode_transferred overlapping");
  }

  @Test
  void withoutATraceparentTheTwoTracesAreJoinedByTheBootstrapRoom() {
    // no gateway, no clock evidence: the servers' clocks agree here
    Fixture f = fixture(9, false, 0, 0);
    List<Attribution> result = TraceAttribution.attribute(f.spans());
    assertMatchesTruth(f, result, 10 * US);
    assertThat(result)
        .allSatisfy(
            a ->
                assertThat(a.notes())
                    .anyMatch(
                        n -> n.contains("the halves' separate traces joined by bootstrap_room")));
  }
}
