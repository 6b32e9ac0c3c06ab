package dev.llmlat.load.sweep;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * How a sweep point's TTFT divides into its components, over the point's requests that were
 * attributed (rows of {@code llm_request_attribution}, which the CLI reads; this module knows no
 * store), and the scheduler limits that kept its requests queued.
 *
 * @param requests requests attributed
 * @param ttftNs their TTFT, summed
 * @param componentNs each component's time summed over them, in waterfall order (components sum to
 *     {@code ttftNs})
 * @param limits the binding scheduler limits named for their queue time, most queue time first
 */
public record ComponentShares(
    int requests, long ttftNs, Map<String, Long> componentNs, List<Limit> limits) {
  /**
   * A limit that kept requests waiting ("KV cache 97% full").
   *
   * @param kind the limit, its figures left out ("KV cache N% full"): limits of one kind add up
   * @param example the words of the request that queued longest under it
   * @param requests requests it kept waiting
   * @param queueNs their queue time, summed
   */
  public record Limit(String kind, String example, int requests, long queueNs) {
    public Limit {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(example, "example");
    }
  }

  public ComponentShares {
    if (requests < 0 || ttftNs < 0) {
      throw new IllegalArgumentException(
          "requests and TTFT must not be negative: " + requests + ", " + ttftNs);
    }
    componentNs = Collections.unmodifiableMap(new LinkedHashMap<>(componentNs));
    limits = limits.stream().sorted(Comparator.comparingLong(Limit::queueNs).reversed()).toList();
  }

  /** A component's share of TTFT, 0 to 1. */
  public double share(String component) {
    return ttftNs > 0 ? componentNs.getOrDefault(component, 0L) / (double) ttftNs : 0;
  }

  /** A component's mean time per attributed request, in ms. */
  public double meanMs(String component) {
    return requests > 0 ? componentNs.getOrDefault(component, 0L) / 1e6 / requests : 0;
  }

  /** Components with time, the largest first. */
  public List<String> ranked() {
    List<String> ranked = new ArrayList<>();
    componentNs.forEach(
        (c, ns) -> {
          if (ns > 0) {
            ranked.add(c);
          }
        });
    ranked.sort(Comparator.comparingLong((String c) -> componentNs.get(c)).reversed());
    return ranked;
  }

  /** The limit that kept requests waiting longest, or null when none was named. */
  public Limit binding() {
    return limits.isEmpty() ? null : limits.getFirst();
  }

  /**
   * The point in words: "at 8 req/s queue is 61% of TTFT, 40 points ahead of prefill_gpu (21%)",
   * and the binding limit where one was named.
   */
  public String sentence(String at) {
    List<String> ranked = ranked();
    if (ranked.isEmpty()) {
      return "at " + at + " no request was attributed";
    }
    String first = ranked.getFirst();
    StringBuilder s =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "at %s %s is %d%% of TTFT",
                at,
                first,
                Math.round(100 * share(first))));
    if (ranked.size() > 1) {
      String second = ranked.get(1);
      long points = Math.round(100 * share(first)) - Math.round(100 * share(second));
      s.append(
          String.format(
              Locale.ROOT,
              ", %d point%s ahead of %s (%d%%)",
              points,
              points == 1 ? "" : "s",
              second,
              Math.round(100 * share(second))));
    }
    Limit binding = binding();
    if (binding != null) {
      s.append(
          String.format(
              Locale.ROOT,
              "; binding limit: %s (%d of %d requests)",
              binding.example(),
              binding.requests(),
              requests));
    }
    return s.toString();
  }
}
