package dev.llmlat.analyze;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Estimates each host's clock offset against the gateway's from client/server span pairs across
 * hosts (a CLIENT span and the SERVER span whose parent it is), NTP style: for client send t1,
 * server receive t2, server send t3, client receive t4, the offset is ((t2-t1)+(t3-t4))/2 and
 * the round-trip delay (t4-t1)-(t3-t2) bounds its error. Many pairs are combined robustly: the
 * half with the smallest delays, then a Theil-Sen line through time (so a drifting clock is
 * followed) or their median. Hosts are chained along a spanning tree rooted at the gateway hosts.
 * An offset smaller than its uncertainty is reported but not applied: spans are never moved on
 * weak evidence.
 */
public final class ClockSkewEstimator {
  private static final int MIN_PAIRS_FOR_DRIFT = 8;
  private static final double MIN_SECONDS_FOR_DRIFT = 2.0;
  /**
   * Below this many pairs the evidence is thin: an offset is applied only when it exceeds its
   * uncertainty by more than max(1 ms, 1% of the exchange's duration), as when a server span sits
   * wholly outside its client. Smaller violations are jitter more often than skew.
   */
  private static final int STRONG_EVIDENCE_PAIRS = 8;
  private static final long MIN_EXCESS_NS = 1_000_000;

  /** One exchange across two clock domains: server-minus-client offset, delay, time. */
  record Pair(String clientHost, String serverHost, double offsetNs, long delayNs, long timeNs, long clientDurationNs) {}

  private ClockSkewEstimator() {}

  /** Corrections for every clock domain in {@code spans} (the gateway's get none). */
  public static Map<String, ClockCorrection> estimate(List<SpanRecord> spans) {
    // only CLIENT spans can be the client half of a pair
    Map<String, SpanRecord> bySpanId = new HashMap<>();
    for (SpanRecord s : spans) {
      if ("Client".equals(s.kind())) {
        bySpanId.put(s.traceId() + s.spanId(), s);
      }
    }
    Map<String, Map<String, List<Pair>>> edges = new HashMap<>();
    List<String> roots = new ArrayList<>();
    for (SpanRecord server : spans) {
      if (LayerNames.GATEWAY.equals(server.layer()) && "Server".equals(server.kind()) && !roots.contains(server.clockDomain())) {
        roots.add(server.clockDomain());
      }
      if (!"Server".equals(server.kind()) || server.parentSpanId().isEmpty()) {
        continue;
      }
      SpanRecord client = bySpanId.get(server.traceId() + server.parentSpanId());
      if (client == null || !"Client".equals(client.kind()) || client.clockDomain().equals(server.clockDomain())
          || client.durationNs() <= 0 || server.durationNs() <= 0) {
        continue; // same clock, or an exchange without both ends timed: no evidence
      }
      long t1 = client.startNs();
      long t2 = server.startNs();
      long t3 = server.endNs();
      long t4 = client.endNs();
      Pair p = new Pair(client.clockDomain(), server.clockDomain(), ((t2 - t1) + (double) (t3 - t4)) / 2.0,
          Math.max(0, (t4 - t1) - (t3 - t2)), t1 / 2 + t4 / 2, t4 - t1);
      edges.computeIfAbsent(p.clientHost(), k -> new HashMap<>()).computeIfAbsent(p.serverHost(), k -> new ArrayList<>()).add(p);
    }
    if (roots.isEmpty()) {
      // no gateway layer: the hosts of the traces' root spans are the reference
      for (SpanRecord s : spans) {
        if (s.parentSpanId().isEmpty() && !roots.contains(s.clockDomain())) {
          roots.add(s.clockDomain());
        }
      }
    }
    Map<String, ClockCorrection> result = new LinkedHashMap<>();
    Deque<String> queue = new ArrayDeque<>();
    for (String root : roots) {
      result.put(root, ClockCorrection.none(root));
      queue.add(root);
    }
    walk(queue, edges, result);
    // hosts the roots don't reach: each such component takes its first client host as reference
    for (String client : new ArrayList<>(edges.keySet())) {
      if (!result.containsKey(client)) {
        result.put(client, ClockCorrection.none(client));
        queue.add(client);
        walk(queue, edges, result);
      }
    }
    return result;
  }

  private static void walk(Deque<String> queue, Map<String, Map<String, List<Pair>>> edges, Map<String, ClockCorrection> result) {
    while (!queue.isEmpty()) {
      String client = queue.poll();
      ClockCorrection base = result.get(client);
      for (Map.Entry<String, List<Pair>> e : edges.getOrDefault(client, Map.of()).entrySet()) {
        if (result.containsKey(e.getKey())) {
          continue;
        }
        result.put(e.getKey(), combine(client, e.getKey(), e.getValue(), base));
        queue.add(e.getKey());
      }
    }
  }

  /** The server host's correction: minus its offset against the client host, plus the client's own. */
  static ClockCorrection combine(String clientHost, String serverHost, List<Pair> pairs, ClockCorrection base) {
    List<Pair> sorted = new ArrayList<>(pairs);
    sorted.sort((a, b) -> Long.compare(a.delayNs(), b.delayNs()));
    List<Pair> best = sorted.subList(0, Math.max(1, (sorted.size() + 1) / 2));
    long minDelay = sorted.get(0).delayNs();
    double[] times = best.stream().mapToDouble(p -> p.timeNs() / 1e9).toArray();
    double[] offsets = best.stream().mapToDouble(Pair::offsetNs).toArray();
    double span = Arrays.stream(times).max().orElse(0) - Arrays.stream(times).min().orElse(0);
    long reference = best.get(0).timeNs();
    double slope = 0;
    double intercept;
    if (best.size() >= MIN_PAIRS_FOR_DRIFT && span >= MIN_SECONDS_FOR_DRIFT) {
      slope = theilSenSlope(times, offsets);
      reference = (long) (median(times) * 1e9);
      double[] residual0 = new double[offsets.length];
      for (int i = 0; i < offsets.length; i++) {
        residual0[i] = offsets[i] - slope * (times[i] - reference / 1e9);
      }
      intercept = median(residual0);
    } else {
      intercept = median(offsets);
    }
    double[] residuals = new double[offsets.length];
    for (int i = 0; i < offsets.length; i++) {
      residuals[i] = Math.abs(offsets[i] - (intercept + slope * (times[i] - reference / 1e9)));
    }
    long uncertainty = Math.max(minDelay / 2, Math.round(median(residuals)));
    long offset = -Math.round(intercept); // add to server timestamps to put them on the client's clock
    double excess = Math.max(Math.abs(intercept), Math.abs(slope) * span) - uncertainty;
    long typicalDuration = (long) median(best.stream().mapToDouble(Pair::clientDurationNs).toArray());
    double needed = pairs.size() >= STRONG_EVIDENCE_PAIRS ? 0 : Math.max(MIN_EXCESS_NS, typicalDuration / 100.0);
    boolean significant = excess > needed;
    long baseOffset = base.offsetAt(reference);
    return new ClockCorrection(serverHost, clientHost, offset + baseOffset, -slope + base.driftNsPerSecond(), reference,
        uncertainty + base.uncertaintyNs(), pairs.size(), significant,
        significant ? "estimated from " + pairs.size() + " client/server pairs"
            : "offset " + (-Math.round(intercept)) + " ns is within its uncertainty ±" + uncertainty + " ns"
                + (pairs.size() < STRONG_EVIDENCE_PAIRS ? " (plus the margin for " + pairs.size() + " pair(s))" : "") + ": not applied");
  }

  static double theilSenSlope(double[] x, double[] y) {
    List<Double> slopes = new ArrayList<>();
    for (int i = 0; i < x.length; i++) {
      for (int j = i + 1; j < x.length; j++) {
        if (x[j] != x[i]) {
          slopes.add((y[j] - y[i]) / (x[j] - x[i]));
        }
      }
    }
    return slopes.isEmpty() ? 0 : median(slopes.stream().mapToDouble(Double::doubleValue).toArray());
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
}
