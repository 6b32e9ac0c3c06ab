package dev.llmlat.semconv;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The components a request's TTFT is split into, in waterfall order: each one's name (as {@code
 * explain}, {@code report} and the metrics spell it), its {@code llm_request_attribution} column,
 * its precedence where several explanations cover the same instant, its colour in every chart and
 * what it means.
 *
 * <p>Precedence: the timeline from the request's start to its first token is cut at every span
 * boundary and each piece goes to the explanation of highest precedence covering it. An engine step
 * ({@link #STEP_PRECEDENCE}) is split afterwards by its GPU busy time into {@link #PREFILL_CPU},
 * {@link #PREFILL_GPU}, {@link #RANK_WAIT} and {@link #BATCH_INTERFERENCE}.
 */
public enum TtftComponent {
  CLIENT_TO_GATEWAY(
      "client_to_gateway",
      Precedence.EDGE,
      "#79706E",
      "the client's request on its way to the gateway (only when a client layer started the trace)"),
  GATEWAY_IN(
      "gateway_in",
      Precedence.EDGE,
      "#9D755D",
      "the gateway's own handling on the way in: routing, filters, its HTTP client's work"),
  UPSTREAM_POOL_WAIT(
      "upstream_pool_wait",
      Precedence.CONNECTION,
      "#8C564B",
      "the wait for a connection from the gateway HTTP client's pool"),
  UPSTREAM_CONNECT(
      "upstream_connect", Precedence.CONNECTION, "#C49C94", "the TCP connect to the engine"),
  UPSTREAM_TLS(
      "upstream_tls", Precedence.CONNECTION, "#E7BA52", "the TLS handshake with the engine"),
  NETWORK_IN(
      "network_in",
      Precedence.EDGE,
      "#BAB0AC",
      "the wire: from the request's headers written (else the gateway's call) to the engine's arrival"),
  ENGINE_IN(
      "engine_in",
      Precedence.ENGINE_IN,
      "#D6A5C9",
      "the engine's handling before it queued the request (API server, tokenizer)"),
  QUEUE("queue", Precedence.QUEUE, "#E45756", "waiting in the engine's scheduler queue"),
  DECODE_WAIT(
      "decode_wait",
      Precedence.DECODE_WAIT,
      "#FF7F0E",
      "disaggregated serving: the KV cache ready on the prefill instance, the decode instance not"
          + " receiving it yet"),
  KV_TRANSFER(
      "kv_transfer",
      Precedence.KV_TRANSFER,
      "#FF9DA6",
      "the KV cache on the wire between instances"),
  PREFILL_CPU(
      "prefill_cpu",
      Precedence.PREFILL_GAP,
      "#F58518",
      "the prefill steps' CPU and launch time, and the gaps between them"),
  PREFILL_GPU(
      "prefill_gpu",
      Precedence.STEP,
      "#54A24B",
      "the request's own share of its prefill steps' GPU time (by tokens)"),
  RANK_WAIT(
      "rank_wait",
      Precedence.STEP,
      "#17BECF",
      "tensor parallelism: the step's collectives waiting for a late rank"),
  BATCH_INTERFERENCE(
      "batch_interference",
      Precedence.STEP,
      "#B279A2",
      "the GPU time of the other requests batched into the same steps"),
  FIRST_SAMPLE(
      "first_sample",
      Precedence.FIRST_SAMPLE,
      "#EECA3B",
      "from the last prefill step to the first token: sampling, detokenizing, the engine's output"),
  NETWORK_OUT(
      "network_out", Precedence.EDGE, "#72B7B2", "the first token on its way back to the gateway"),
  GATEWAY_OUT(
      "gateway_out",
      Precedence.EDGE,
      "#4C78A8",
      "the gateway writing the first token to its client (including when the client read slowly)"),
  GATEWAY_TO_CLIENT(
      "gateway_to_client",
      Precedence.EDGE,
      "#9ECAE9",
      "the first token on its way to the client (only when a client layer started the trace)"),
  UNATTRIBUTED(
      "unattributed",
      Precedence.NONE,
      "#D3D3D3",
      "time no span explains (or an engine llmlat cannot see into)");

  /** Precedence of an engine step, above every component's own. */
  public static final int STEP_PRECEDENCE = Precedence.STEP;

  /** The precedences, lowest first; equal ones tie to the explanation found first. */
  private static final class Precedence {
    static final int NONE = 0;
    static final int EDGE = 1;
    // the upstream connection's pool wait, connect and TLS inside gateway_in/network_in, and the
    // gateway blocked on its client inside gateway_out
    static final int CONNECTION = 2;
    static final int PREFILL_GAP = 3;
    // KV ready, the decode side not receiving: whatever else explains the instant wins
    static final int DECODE_WAIT = 3;
    static final int FIRST_SAMPLE = 4;
    static final int ENGINE_IN = 5;
    static final int QUEUE = 6;
    static final int KV_TRANSFER = 7;
    static final int STEP = 8;
  }

  private static final List<TtftComponent> ALL = List.of(values());
  private static final List<String> IDS = ALL.stream().map(TtftComponent::id).toList();
  private static final Map<String, TtftComponent> BY_NAME =
      Arrays.stream(values()).collect(Collectors.toMap(TtftComponent::id, Function.identity()));

  private final String id;
  private final int precedence;
  private final String colour;
  private final String description;
  private final String column;

  TtftComponent(String id, int precedence, String colour, String description) {
    this.id = id;
    this.precedence = precedence;
    this.colour = colour;
    this.description = description;
    StringBuilder c = new StringBuilder();
    for (String word : id.split("_")) {
      c.append(Character.toUpperCase(word.charAt(0))).append(word, 1, word.length());
    }
    this.column = c.append("Ns").toString();
  }

  /** All of them, in waterfall order. */
  public static List<TtftComponent> all() {
    return ALL;
  }

  /** Their names, in waterfall order (the keys of an attribution's components). */
  public static List<String> ids() {
    return IDS;
  }

  /** The component named {@code id} ({@code queue}), if there is one. */
  public static Optional<TtftComponent> byId(String id) {
    return Optional.ofNullable(BY_NAME.get(id));
  }

  /** The name: {@code kv_transfer}. */
  public String id() {
    return id;
  }

  /** The {@code llm_request_attribution} column: {@code KvTransferNs}. */
  public String column() {
    return column;
  }

  /**
   * Which explanation wins an instant several cover: the highest ({@link #STEP_PRECEDENCE} above
   * all).
   */
  public int precedence() {
    return precedence;
  }

  /** The colour it has in every chart ({@code #RRGGBB}). */
  public String colour() {
    return colour;
  }

  /** What it is, in a phrase. */
  public String description() {
    return description;
  }

  @Override
  public String toString() {
    return id;
  }
}
