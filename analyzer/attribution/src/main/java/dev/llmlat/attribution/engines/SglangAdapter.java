package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * SGLang's request tracing ({@code --enable-trace}; python/sglang/srt/observability/trace.py and
 * req_time_stats.py): an INTERNAL root {@code "<role> Req <rid8>"} under the gateway's span, a
 * thread span per process ({@code Tokenizer (...)}, {@code Scheduler [TP n] ... (...)}) and under
 * those the stage slices: tokenize, api_server_dispatch (or dispatch), request_process,
 * prefill_waiting, prefill_forward with one chunked_prefill per chunk, decode_waiting,
 * decode_forward with one decode_loop per step; on a PD decode server decode_prepare,
 * decode_bootstrap, decode_transferred (the KV transfer) and fake_output. Every tensor-parallel
 * rank writes the same slices: rank 0's are read.
 */
public final class SglangAdapter implements EngineAdapter {
  static final String SCOPE = "sglang server";
  static final String MODULE = "sglang::request";
  // the root's name and module say it (the scope need not: any tracer name, the module is SGLang's
  // own)
  private static final RequestRule RULE =
      new RequestRule(
          SpanCondition.nameMatches("(prefill |decode )? *Req \\S{1,8}"),
          SpanCondition.attribute("module", MODULE),
          SpanCondition.anyOf(
              SpanCondition.scope(SCOPE), SpanCondition.attribute("module", MODULE)),
          Set.of());
  private static final Set<String> HANDLING =
      Set.of(
          "tokenize",
          "api_server_dispatch",
          "dispatch",
          "dpc_dispatch",
          "dc_dispatch",
          "request_process",
          "prefill_prepare",
          "decode_prepare");
  // PD: the bootstrap queues wait for the other server (the handshake; on decode, free KV memory
  // too)
  private static final Set<String> WAITING =
      Set.of("prefill_bootstrap", "prefill_waiting", "decode_bootstrap", "decode_waiting");

  /** The PD bootstrap room both servers of a request are given: its key across their traces. */
  static final String BOOTSTRAP_ROOM = "bootstrap_room";

  @Override
  public String name() {
    return "SGLang";
  }

  @Override
  public String cannotShow() {
    return "token counts per prefill chunk; GPU time (without a GPU export); the HTTP handling before tokenization";
  }

  @Override
  public RequestRule requestRule() {
    return RULE;
  }

  /**
   * A PD server's root is named for its role ({@code "prefill Req ..."}, {@code "decode Req ..."}).
   */
  @Override
  public String role(SpanRecord root) {
    String n = root.name();
    return n.startsWith("prefill ") ? PREFILL : n.startsWith("decode ") ? DECODE : "";
  }

  @Override
  public String roleEvidence() {
    return "SGLang's prefill/decode root spans";
  }

  @Override
  public String joinKeyAttribute() {
    return BOOTSTRAP_ROOM;
  }

  /**
   * The request's bootstrap room (on the root, or on the {@code "Bootstrap Room 0x..."} span above
   * it), in one form whatever the version wrote: Python's {@code hex()} or a decimal integer; 0 and
   * None are no room.
   */
  @Override
  public String joinKey(SpanRecord span) {
    String v = span.attr(BOOTSTRAP_ROOM).trim();
    try {
      java.math.BigInteger room =
          v.startsWith("0x") || v.startsWith("0X")
              ? new java.math.BigInteger(v.substring(2), 16)
              : new java.math.BigInteger(v);
      return room.signum() == 0 ? "" : room.toString(16);
    } catch (NumberFormatException e) {
      return ""; // "None", empty: not a PD request
    }
  }

  @Override
  public EngineRequest read(SpanRecord root, TraceContext context) {
    EngineRequest.Builder b =
        EngineRequest.builder(name(), root)
            .model(root.attr("gen_ai.response.model"))
            .requestId(Attrs.first(root, "gen_ai.request.id", "rid"))
            .finishReason(root.attr("gen_ai.response.finish_reasons"))
            .tokens(
                root.longAttr("gen_ai.usage.prompt_tokens", 0),
                root.longAttr("gen_ai.usage.completion_tokens", 0));
    SpanRecord scheduler = null;
    List<SpanRecord> slices = new ArrayList<>();
    for (SpanRecord thread : context.children(root)) {
      String label = thread.attr("thread_label");
      if (label.contains("Scheduler") || thread.name().contains("Scheduler")) {
        // one rank's view: the others repeat it
        if (scheduler == null || thread.longAttr("tp_rank", 0) < scheduler.longAttr("tp_rank", 0)) {
          scheduler = thread;
        }
      } else {
        slices.addAll(context.children(thread));
      }
    }
    if (scheduler == null) {
      b.note(
          "no Scheduler thread span (not exported yet, or trace level below 1): only the root is known");
      long ttft = Attrs.seconds(root, GenAiLatency.TTFT);
      if (ttft >= 0) {
        b.firstToken(root.startNs() + ttft);
      }
      return b.build();
    }
    b.instance(
        scheduler.attr("host_id").isEmpty()
            ? root.engineInstance()
            : "sglang host "
                + shortId(scheduler.attr("host_id"))
                + " pid "
                + scheduler.attr("pid"));
    slices.addAll(context.children(scheduler));
    slices.sort(Comparator.comparingLong(SpanRecord::startNs));
    long firstToken = -1;
    long scheduled = -1;
    List<Long> tokens = new ArrayList<>();
    for (SpanRecord s : slices) {
      String n = s.name();
      if (HANDLING.contains(n)) {
        b.handling(s.startNs(), s.endNs(), n);
      } else if (WAITING.contains(n)) {
        if (scheduled < 0 && firstToken < 0) {
          b.queued(s.startNs());
        }
        b.wait(s.startNs(), s.endNs(), n);
        if (firstToken < 0) {
          scheduled = s.endNs();
        }
      } else if ("decode_transferred".equals(n) || "prefill_transfer_kv_cache".equals(n)) {
        b.kvTransfer(s.startNs(), s.endNs(), n);
      } else if ("prefill_forward".equals(n)) {
        List<SpanRecord> chunks =
            new ArrayList<>(
                context.children(s).stream()
                    .filter(c -> "chunked_prefill".equals(c.name()))
                    .toList());
        chunks.sort(Comparator.comparingLong(SpanRecord::startNs));
        for (SpanRecord c : chunks.isEmpty() ? List.of(s) : chunks) {
          b.prefill(
              new EngineRequest.Prefill(
                  c.startNs(), c.endNs(), c.name(), "", 0, 0, batchSize(c), List.of()));
        }
        if (scheduled < 0) {
          scheduled = s.startNs();
        }
        firstToken = s.endNs();
      } else if ("decode_forward".equals(n)) {
        for (SpanRecord c : context.children(s)) {
          if ("fake_output".equals(c.name())) {
            // a PD decode server replays the prefill server's first token without a forward pass
            firstToken = firstToken < 0 ? c.endNs() : firstToken;
            scheduled = scheduled < 0 ? c.startNs() : scheduled;
          } else if ("decode_loop".equals(c.name())) {
            tokens.add(c.endNs());
          }
        }
      }
    }
    if (firstToken < 0) {
      long ttft = Attrs.seconds(root, GenAiLatency.TTFT);
      if (ttft >= 0) {
        firstToken = root.startNs() + ttft;
        b.note("first token from gen_ai.latency.time_to_first_token (no prefill_forward slice)");
      }
    }
    b.scheduled(scheduled).firstToken(firstToken);
    // what the slices leave between receipt and the waiting queue is still the engine's handling
    // (IPC)
    long queued =
        slices.stream()
            .filter(x -> WAITING.contains(x.name()))
            .mapToLong(SpanRecord::startNs)
            .min()
            .orElse(scheduled);
    if (queued > root.startNs()) {
      b.handling(root.startNs(), queued, "received to the waiting queue");
    }
    tokens.removeIf(t -> t <= 0);
    b.decodeTokens(tokens.stream().sorted().mapToLong(Long::longValue).toArray());
    for (SpanRecord s : slices) {
      for (SpanRecord.Event ev : s.events()) {
        if ("retract".equals(ev.name())) {
          b.preempted(ev.timeNs());
        }
      }
    }
    if (root.name().startsWith("decode ")) {
      b.note(
          "a PD decode server's view: decode_transferred is the KV transfer, decode_bootstrap its wait for KV memory");
    }
    b.note(
        "SGLang records no token counts per prefill chunk: a chunk's batch share comes from its schedule event");
    return b.build();
  }

  /** The batch size of the {@code schedule} event on a prefill slice (0 when none). */
  private static int batchSize(SpanRecord slice) {
    for (SpanRecord.Event ev : slice.events()) {
      if ("schedule".equals(ev.name())) {
        try {
          return Integer.parseInt(ev.attributes().getOrDefault("batch_size", "0"));
        } catch (NumberFormatException e) {
          return 0;
        }
      }
    }
    return 0;
  }

  private static String shortId(String hostId) {
    return hostId.length() <= 8 ? hostId : hostId.substring(0, 8);
  }
}
