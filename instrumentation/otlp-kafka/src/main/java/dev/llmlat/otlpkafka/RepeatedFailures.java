package dev.llmlat.otlpkafka;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Failures counted by kind, so that a storm of one failure (a broker gone: every record, every
 * reconnect of every client) is said once in full and then as one line with a count. A kind is the
 * message with its numbers blanked: "node 1 (/127.0.0.1:9092)" and "node -1 (...)" are one.
 */
public final class RepeatedFailures {
  /** Kinds remembered at most; past that, new kinds are counted under the last one seen. */
  private static final int MAX_KINDS = 256;

  private final String noun;
  private final Map<String, String> firstOfKind = new HashMap<>();
  private final Map<String, Long> heldBack = new LinkedHashMap<>();
  private final Map<String, Long> counts = new HashMap<>();
  private String lastKind = "";

  /** {@code noun} names them in the summary: "send failures", "Kafka client warnings". */
  public RepeatedFailures(String noun) {
    this.noun = noun;
  }

  /**
   * Records one failure; true when it is the first of its kind (say it in full), false when only
   * counted.
   */
  public synchronized boolean record(String message) {
    String kind = kind(message);
    if (!firstOfKind.containsKey(kind) && firstOfKind.size() >= MAX_KINDS) {
      kind = lastKind;
    }
    lastKind = kind;
    counts.merge(kind, 1L, Long::sum);
    if (firstOfKind.putIfAbsent(kind, message) == null) {
      return true;
    }
    heldBack.merge(kind, 1L, Long::sum);
    return false;
  }

  /** How many of {@code message}'s kind were recorded, the first included. */
  public synchronized long count(String message) {
    return counts.getOrDefault(kind(message), 0L);
  }

  /**
   * " (…and 143 more send failures like it)" for {@code message}'s kind, or "" when it was the only
   * one.
   */
  public synchronized String andMore(String message) {
    long more = count(message) - 1;
    return more > 0 ? " (…and " + more + " more " + noun + " like it)" : "";
  }

  /**
   * One line for each kind held back since the last call, naming its first message; the kinds stay
   * known, so later ones are counted for the next summary rather than said again.
   */
  public synchronized List<String> drainSummary() {
    List<String> lines = new ArrayList<>();
    heldBack.forEach(
        (kind, n) ->
            lines.add("…and " + n + " more " + noun + " like it (" + firstOfKind.get(kind) + ")"));
    heldBack.clear();
    return lines;
  }

  static String kind(String message) {
    return message == null ? "" : message.replaceAll("-?\\d+", "#");
  }
}
