package dev.llmlat.nvtx;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads engine steps out of CPU range text (NVTX ranges, {@code record_function} annotations). A
 * pattern is one or more regular expressions; the first whose match covers the whole text wins.
 * Each expression names the trace ids with the group {@code traces} (32-hex ids separated by commas
 * or whitespace) and may name {@code kind} and {@code step} (the engine step span id).
 *
 * <p>The default for the scheduler SDK is {@link #LLMLAT}; {@link #AUTO} tries every preset and is
 * the default for files. See schemas/formats/gpu-exports.md for the formats. Besides steps, the
 * presets read KV-cache transfers of disaggregated prefill/decode ({@link
 * RangeMatch#isKvTransfer()}): one request each, kinds {@link RangeMatch#KV_SEND} and {@link
 * RangeMatch#KV_RECV}.
 */
public final class NvtxPattern {
  private static final String ID = "[0-9a-fA-F]{32}";
  private static final String IDS = ID + "(?:[,\\s]+" + ID + ")*";
  private static final Pattern SEPARATOR = Pattern.compile("[,\\s]+");

  /**
   * {@code llmlat step=<16hex span id> kind=<prefill|decode|mixed> traces=<32hex>[,<32hex>...]}:
   * the scheduler SDK.
   */
  public static final NvtxPattern LLMLAT =
      new NvtxPattern("llmlat", List.of(new Rule(NvtxStepRange.PATTERN, null)));

  /** {@code prefill <trace_id>} (the H200 Nsight captures). */
  public static final NvtxPattern PREFILL =
      new NvtxPattern(
          "prefill",
          List.of(new Rule(Pattern.compile("prefill (?<traces>" + IDS + ")"), "prefill")));

  /** {@code decode <id>,<id>,...} (the H200 Nsight captures). */
  public static final NvtxPattern DECODE =
      new NvtxPattern(
          "decode", List.of(new Rule(Pattern.compile("decode (?<traces>" + IDS + ")"), "decode")));

  /** {@code prefill trace_id=<id>} (the H200 Kineto capture). */
  public static final NvtxPattern PREFILL_TRACE_ID =
      new NvtxPattern(
          "prefill-trace-id",
          List.of(new Rule(Pattern.compile("prefill trace_id=(?<traces>" + IDS + ")"), "prefill")));

  /** {@code decode_step <id>,<id>,...} (the H200 Kineto capture). */
  public static final NvtxPattern DECODE_STEP =
      new NvtxPattern(
          "decode-step",
          List.of(new Rule(Pattern.compile("decode_step (?<traces>" + IDS + ")"), "decode")));

  /**
   * {@code kv_send <trace_id>}: a request's KV cache sent by a prefill instance (disaggregated
   * serving).
   */
  public static final NvtxPattern KV_SEND =
      new NvtxPattern(
          "kv-send",
          List.of(new Rule(Pattern.compile("kv_send (?<traces>" + ID + ")"), RangeMatch.KV_SEND)));

  /** {@code kv_recv <trace_id>}: a request's KV cache received by a decode instance. */
  public static final NvtxPattern KV_RECV =
      new NvtxPattern(
          "kv-recv",
          List.of(new Rule(Pattern.compile("kv_recv (?<traces>" + ID + ")"), RangeMatch.KV_RECV)));

  /** Every preset above, in that order. */
  public static final NvtxPattern AUTO =
      anyOf("auto", LLMLAT, PREFILL, DECODE, PREFILL_TRACE_ID, DECODE_STEP, KV_SEND, KV_RECV);

  private final String name;
  private final List<Rule> rules;

  private record Rule(Pattern regex, String fixedKind) {}

  private NvtxPattern(String name, List<Rule> rules) {
    this.name = name;
    this.rules = List.copyOf(rules);
  }

  /**
   * A user's format. The expression must have a named group {@code traces}; optional groups {@code
   * kind} and {@code step}.
   *
   * @throws IllegalArgumentException when the expression does not compile or lacks {@code
   *     (?<traces>...)}
   */
  public static NvtxPattern regex(String regex) {
    if (!regex.contains("(?<traces>")) {
      throw new IllegalArgumentException(
          "NVTX pattern needs a named group (?<traces>...): " + regex);
    }
    return new NvtxPattern(regex, List.of(new Rule(Pattern.compile(regex), null)));
  }

  /** The first of {@code patterns} that matches wins. */
  public static NvtxPattern anyOf(String name, NvtxPattern... patterns) {
    List<Rule> all = new ArrayList<>();
    for (NvtxPattern p : patterns) {
      all.addAll(p.rules);
    }
    return new NvtxPattern(name, all);
  }

  /**
   * A preset by name: {@code llmlat, prefill, decode, prefill-trace-id, decode-step, kv-send,
   * kv-recv, auto}.
   */
  public static NvtxPattern preset(String name) {
    switch (name.toLowerCase(Locale.ROOT)) {
      case "llmlat":
        return LLMLAT;
      case "prefill":
        return PREFILL;
      case "decode":
        return DECODE;
      case "prefill-trace-id":
        return PREFILL_TRACE_ID;
      case "decode-step":
        return DECODE_STEP;
      case "kv-send":
        return KV_SEND;
      case "kv-recv":
        return KV_RECV;
      case "auto":
        return AUTO;
      default:
        throw new IllegalArgumentException(
            "unknown NVTX preset '"
                + name
                + "' (llmlat, prefill, decode, prefill-trace-id, decode-step, kv-send, kv-recv, auto)");
    }
  }

  /** The step a range's text describes, or empty when the text is not a step of this format. */
  public Optional<RangeMatch> match(String text) {
    if (text == null || text.isEmpty()) {
      return Optional.empty();
    }
    for (Rule rule : rules) {
      Matcher m = rule.regex.matcher(text);
      if (!m.matches()) {
        continue;
      }
      String kind = rule.fixedKind != null ? rule.fixedKind : group(m, "kind");
      String step = group(m, "step");
      List<String> traces = new ArrayList<>();
      for (String id : SEPARATOR.split(m.group("traces").trim())) {
        if (!id.isEmpty()) {
          traces.add(id.toLowerCase(Locale.ROOT));
        }
      }
      if (traces.isEmpty()) {
        continue;
      }
      return Optional.of(
          new RangeMatch(kind, step == null ? null : step.toLowerCase(Locale.ROOT), traces));
    }
    return Optional.empty();
  }

  private static String group(Matcher m, String name) {
    try {
      return m.group(name);
    } catch (IllegalArgumentException noSuchGroup) {
      return null;
    }
  }

  /** The preset's name, or the user's expression. */
  public String name() {
    return name;
  }

  @Override
  public String toString() {
    return "NvtxPattern[" + name + "]";
  }
}
