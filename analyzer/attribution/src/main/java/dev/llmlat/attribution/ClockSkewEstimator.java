package dev.llmlat.attribution;

import dev.llmlat.attribution.engines.EngineAdapters;
import dev.llmlat.stats.Quantiles;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Estimates each clock domain's offset against the gateway's from client/server span pairs across
 * domains (a CLIENT span and the SERVER span whose parent it is).
 *
 * <p>A pair is a round trip only when the client span covers the server span (it lasts at least as
 * long): then, NTP style, for client send t1, server receive t2, server send t3, client receive t4,
 * the offset is ((t2-t1)+(t3-t4))/2 and the round-trip delay (t4-t1)-(t3-t2) bounds its error. Many
 * round trips are combined robustly: the half with the smallest delays, then a Theil-Sen line
 * through time (so a drifting clock is followed) or their median.
 *
 * <p>A streamed response is not a round trip: HTTP clients end their span at the response headers
 * while the server's span lasts the whole stream. Such a pair gives bounds only: the server started
 * after its client did, and ended before the nearest client-side ancestor that covers it (the
 * gateway's own SERVER span). Every pair gives those bounds.
 *
 * <p>An offset is applied where the bounds force one (a server span starting before its client), or
 * where round trips estimate it tightly (larger than its uncertainty, and inside the bounds); never
 * otherwise. Domains are chained along a spanning tree rooted at the gateway's, followed both ways:
 * the engines the gateway called, and the clients (load generators) that called it.
 */
public final class ClockSkewEstimator {
  private static final int MIN_PAIRS_FOR_DRIFT = 8;
  private static final double MIN_SECONDS_FOR_DRIFT = 2.0;

  /**
   * Below this many round trips the evidence is thin: an offset is applied only when it exceeds its
   * uncertainty by more than max(1 ms, 1% of the exchange's duration), as when a server span sits
   * wholly outside its client. Smaller violations are jitter more often than skew.
   */
  private static final int STRONG_EVIDENCE_PAIRS = 8;

  private static final long MIN_EXCESS_NS = 1_000_000;

  /** One round trip across two clock domains: server-minus-client offset, delay, time. */
  record Pair(
      String clientHost,
      String serverHost,
      double offsetNs,
      long delayNs,
      long timeNs,
      long clientDurationNs) {}

  /**
   * What one exchange says of the server-minus-client offset θ: θ ≤ upper (the server started after
   * its client), θ ≥ lower (it ended before the covering client-side span; -∞ without one).
   */
  record Bound(long timeNs, double lowerNs, double upperNs) {}

  /** The evidence between one client domain and one server domain. */
  static final class Edge {
    final List<Pair> roundTrips = new ArrayList<>();
    final List<Bound> bounds = new ArrayList<>();
  }

  private ClockSkewEstimator() {}

  /** Corrections for every clock domain in {@code spans} (the gateway's get none). */
  public static Map<String, ClockCorrection> estimate(List<SpanRecord> spans) {
    // CLIENT spans can be the client half of a pair; SERVER spans the covering ancestors of one
    Map<SpanKey, SpanRecord> bySpanId = new HashMap<>();
    for (SpanRecord s : spans) {
      if ("Client".equals(s.kind()) || "Server".equals(s.kind())) {
        bySpanId.put(SpanKey.of(s), s);
      }
    }
    Map<String, Map<String, Edge>> edges = new HashMap<>();
    List<String> roots = new ArrayList<>();
    Map<SpanKey, Integer> fanOut = fanOut(spans, bySpanId);
    for (SpanRecord server : spans) {
      if (dev.llmlat.attribution.engines.UnknownEngine.isGatewayServer(server)
          && !roots.contains(server.clockDomain())) {
        roots.add(server.clockDomain());
      }
      if (server.parentSpanId().isEmpty() || server.durationNs() <= 0) {
        continue;
      }
      SpanRecord client = bySpanId.get(SpanKey.parentOf(server));
      if (client == null
          || !"Client".equals(client.kind())
          || client.clockDomain().equals(server.clockDomain())
          || client.durationNs() <= 0) {
        continue; // same clock, or no exchange with both ends timed: no evidence
      }
      Edge edge =
          edges
              .computeIfAbsent(client.clockDomain(), k -> new HashMap<>())
              .computeIfAbsent(server.clockDomain(), k -> new Edge());
      long t1 = client.startNs();
      long t2 = server.startNs();
      long t3 = server.endNs();
      long t4 = client.endNs();
      // a round trip needs the server's own span (some engines open theirs as INTERNAL); any other
      // span opened under the client (an engine process's phase spans) still bounds the offset
      boolean serverSpan =
          "Server".equals(server.kind()) || EngineAdapters.forRequest(server) != null;
      // a call answered by two servers at once (a PD router's prefill and decode) waited for
      // neither alone
      boolean alone = fanOut.getOrDefault(SpanKey.of(client), 0) < 2;
      if (serverSpan && alone && client.durationNs() >= server.durationNs()) {
        edge.roundTrips.add(
            new Pair(
                client.clockDomain(),
                server.clockDomain(),
                ((t2 - t1) + (double) (t3 - t4)) / 2.0,
                Math.max(0, (t4 - t1) - (t3 - t2)),
                t1 / 2 + t4 / 2,
                t4 - t1));
        edge.bounds.add(new Bound(t1, t3 - t4, t2 - t1));
      } else {
        SpanRecord cover = coveringAncestor(client, server.durationNs(), bySpanId);
        edge.bounds.add(
            new Bound(t1, cover == null ? Double.NEGATIVE_INFINITY : t3 - cover.endNs(), t2 - t1));
      }
    }
    DisaggregatedHandoffs.addEvidence(spans, edges);
    if (roots.isEmpty()) {
      // no gateway layer: the domains of the traces' root spans are the reference
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
    // domains the roots don't reach: each such component takes its first client domain as reference
    for (String client : new ArrayList<>(edges.keySet())) {
      if (!result.containsKey(client)) {
        result.put(client, ClockCorrection.none(client));
        queue.add(client);
        walk(queue, edges, result);
      }
    }
    return result;
  }

  /** Per CLIENT span, how many request or SERVER spans on other clocks are its children. */
  private static Map<SpanKey, Integer> fanOut(
      List<SpanRecord> spans, Map<SpanKey, SpanRecord> bySpanId) {
    Map<SpanKey, Integer> out = new HashMap<>();
    for (SpanRecord s : spans) {
      if (s.parentSpanId().isEmpty()) {
        continue;
      }
      SpanKey parent = SpanKey.parentOf(s);
      SpanRecord client = bySpanId.get(parent);
      if (client != null
          && "Client".equals(client.kind())
          && !client.clockDomain().equals(s.clockDomain())
          && ("Server".equals(s.kind()) || EngineAdapters.forRequest(s) != null)) {
        out.merge(parent, 1, Integer::sum);
      }
    }
    return out;
  }

  /** Adds a round trip of evidence to the edge from the client domain to the server domain. */
  static void addRoundTrip(Map<String, Map<String, Edge>> edges, Pair pair) {
    edges
        .computeIfAbsent(pair.clientHost(), k -> new HashMap<>())
        .computeIfAbsent(pair.serverHost(), k -> new Edge())
        .roundTrips
        .add(pair);
  }

  /**
   * The nearest ancestor of {@code client} on its clock that lasts at least {@code durationNs}, or
   * null.
   */
  private static SpanRecord coveringAncestor(
      SpanRecord client, long durationNs, Map<SpanKey, SpanRecord> bySpanId) {
    SpanRecord up = client;
    for (int depth = 0; depth < 32 && !up.parentSpanId().isEmpty(); depth++) {
      up = bySpanId.get(SpanKey.parentOf(up));
      if (up == null || !up.clockDomain().equals(client.clockDomain())) {
        return null;
      }
      if (up.durationNs() >= durationNs) {
        return up;
      }
    }
    return null;
  }

  private static void walk(
      Deque<String> queue,
      Map<String, Map<String, Edge>> edges,
      Map<String, ClockCorrection> result) {
    // a domain only bounded, not corrected, by the first edge that reaches it waits: another path
    // may time it
    Map<String, ClockCorrection> provisional = new LinkedHashMap<>();
    while (true) {
      walkOnce(queue, edges, result, provisional);
      String next =
          provisional.keySet().stream()
              .filter(d -> !result.containsKey(d))
              .findFirst()
              .orElse(null);
      if (next == null) {
        return;
      }
      result.put(next, provisional.remove(next));
      queue.add(next);
    }
  }

  private static void walkOnce(
      Deque<String> queue,
      Map<String, Map<String, Edge>> edges,
      Map<String, ClockCorrection> result,
      Map<String, ClockCorrection> provisional) {
    while (!queue.isEmpty()) {
      String domain = queue.poll();
      ClockCorrection base = result.get(domain);
      // the domains it called (gateway -> engine)
      for (Map.Entry<String, Edge> e : edges.getOrDefault(domain, Map.of()).entrySet()) {
        if (result.containsKey(e.getKey())) {
          continue;
        }
        ClockCorrection c = correct(domain, e.getKey(), e.getValue(), base);
        if (!c.applied() && e.getValue().roundTrips.isEmpty()) {
          provisional.putIfAbsent(e.getKey(), c);
          continue;
        }
        result.put(e.getKey(), c);
        queue.add(e.getKey());
      }
      // the domains that called it (a load generator calling the gateway): the same evidence, read
      // backwards
      for (Map.Entry<String, Map<String, Edge>> callers : edges.entrySet()) {
        Edge edge = callers.getValue().get(domain);
        String caller = callers.getKey();
        if (edge == null || result.containsKey(caller)) {
          continue;
        }
        ClockCorrection called = correct(caller, domain, edge, ClockCorrection.none(caller));
        ClockCorrection inverse =
            new ClockCorrection(
                caller,
                domain,
                -called.offsetNs(),
                -called.driftNsPerSecond(),
                called.referenceNs(),
                called.uncertaintyNs(),
                called.pairs(),
                called.applied(),
                called.note());
        result.put(
            caller, chain(inverse, base, "as its server " + domain + " sees it: " + called.note()));
        queue.add(caller);
      }
    }
  }

  /** The server domain's correction from one edge's evidence, chained onto the client domain's. */
  static ClockCorrection correct(
      String clientHost, String serverHost, Edge edge, ClockCorrection base) {
    double lower = Double.NEGATIVE_INFINITY;
    double upper = Double.POSITIVE_INFINITY;
    for (Bound b : edge.bounds) {
      lower = Math.max(lower, b.lowerNs());
      upper = Math.min(upper, b.upperNs());
    }
    ClockCorrection estimated =
        edge.roundTrips.isEmpty()
            ? null
            : combine(clientHost, serverHost, edge.roundTrips, ClockCorrection.none(clientHost));
    if (estimated != null && estimated.applied() && withinBounds(estimated, edge.bounds)) {
      return chain(estimated, base, estimated.note());
    }
    // violations within the margin for thin evidence are timestamp jitter and granularity, not skew
    double margin = Math.max(MIN_EXCESS_NS, typicalDuration(edge) / 100.0);
    if (upper < -margin || lower > margin) {
      // the spans cannot be right as stamped: the middle of what the exchanges allow, or, bounded
      // on one side only, the least offset that makes them possible
      boolean bracketed = !Double.isInfinite(lower) && !Double.isInfinite(upper);
      double theta = bracketed ? (lower + upper) / 2 : upper < 0 ? upper : lower;
      long width =
          bracketed ? Math.round(Math.abs(upper - lower) / 2) : Math.round(Math.abs(theta));
      ClockCorrection forced =
          new ClockCorrection(
              serverHost,
              clientHost,
              -Math.round(theta),
              0,
              edge.bounds.get(0).timeNs(),
              width,
              edge.bounds.size(),
              true,
              String.format(
                  "forced by %d exchange(s): the %s clock is %s %s%s",
                  edge.bounds.size(),
                  serverHost,
                  theta < 0 ? "behind" : "ahead",
                  bracketed
                      ? String.format(
                          "by %.3f to %.3f ms",
                          Math.min(Math.abs(lower), Math.abs(upper)) / 1e6,
                          Math.max(Math.abs(lower), Math.abs(upper)) / 1e6)
                      : String.format("by at least %.3f ms", Math.abs(theta) / 1e6),
                  upper < -margin
                      ? " (spans started before their client)"
                      : " (spans ended after the client-side span covering them)"));
      return chain(forced, base, forced.note());
    }
    String why;
    if (estimated == null) {
      why =
          "no round trips; streamed responses bound the offset to "
              + range(lower, upper)
              + ", which holds 0: not applied";
    } else if (!estimated.applied()) {
      why = estimated.note();
    } else {
      why =
          "the round trips' offset "
              + estimated.offsetNs()
              + " ns contradicts the bounds "
              + range(lower, upper)
              + ": not applied";
    }
    long uncertainty =
        estimated != null
            ? estimated.uncertaintyNs()
            : Double.isInfinite(lower) ? 0 : Math.round(upper - lower);
    return new ClockCorrection(
        serverHost,
        clientHost,
        estimated == null ? 0 : estimated.offsetNs() + base.offsetNs(),
        estimated == null ? 0 : estimated.driftNsPerSecond(),
        estimated == null ? 0 : estimated.referenceNs(),
        uncertainty + base.uncertaintyNs(),
        edge.bounds.size(),
        false,
        why);
  }

  private static double typicalDuration(Edge edge) {
    return edge.roundTrips.isEmpty()
        ? 0
        : Quantiles.median(edge.roundTrips.stream().mapToDouble(Pair::clientDurationNs).toArray());
  }

  private static String range(double lower, double upper) {
    return "["
        + (Double.isInfinite(lower) ? "-inf" : String.format("%.3f", lower / 1e6))
        + ", "
        + (Double.isInfinite(upper) ? "+inf" : String.format("%.3f", upper / 1e6))
        + "] ms";
  }

  /** Whether the estimated offset keeps every exchange possible (to within its uncertainty). */
  private static boolean withinBounds(ClockCorrection c, List<Bound> bounds) {
    for (Bound b : bounds) {
      double theta = -c.offsetAt(b.timeNs());
      if (theta > b.upperNs() + c.uncertaintyNs() || theta < b.lowerNs() - c.uncertaintyNs()) {
        return false;
      }
    }
    return true;
  }

  private static ClockCorrection chain(
      ClockCorrection relative, ClockCorrection base, String note) {
    return new ClockCorrection(
        relative.host(),
        relative.relativeTo(),
        relative.offsetNs() + base.offsetAt(relative.referenceNs()),
        relative.driftNsPerSecond() + base.driftNsPerSecond(),
        relative.referenceNs(),
        relative.uncertaintyNs() + base.uncertaintyNs(),
        relative.pairs(),
        relative.applied(),
        note);
  }

  /**
   * The server host's offset against the client host from round trips (NTP style), chained onto
   * {@code base}.
   */
  static ClockCorrection combine(
      String clientHost, String serverHost, List<Pair> pairs, ClockCorrection base) {

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
      reference = (long) (Quantiles.median(times) * 1e9);
      double[] residual0 = new double[offsets.length];
      for (int i = 0; i < offsets.length; i++) {
        residual0[i] = offsets[i] - slope * (times[i] - reference / 1e9);
      }
      intercept = Quantiles.median(residual0);
    } else {
      intercept = Quantiles.median(offsets);
    }
    double[] residuals = new double[offsets.length];
    for (int i = 0; i < offsets.length; i++) {
      residuals[i] = Math.abs(offsets[i] - (intercept + slope * (times[i] - reference / 1e9)));
    }
    long uncertainty = Math.max(minDelay / 2, Math.round(Quantiles.median(residuals)));
    long offset =
        -Math.round(intercept); // add to server timestamps to put them on the client's clock
    double excess = Math.max(Math.abs(intercept), Math.abs(slope) * span) - uncertainty;
    long typicalDuration =
        (long) Quantiles.median(best.stream().mapToDouble(Pair::clientDurationNs).toArray());
    double needed =
        pairs.size() >= STRONG_EVIDENCE_PAIRS
            ? 0
            : Math.max(MIN_EXCESS_NS, typicalDuration / 100.0);
    boolean significant = excess > needed;
    long baseOffset = base.offsetAt(reference);
    return new ClockCorrection(
        serverHost,
        clientHost,
        offset + baseOffset,
        -slope + base.driftNsPerSecond(),
        reference,
        uncertainty + base.uncertaintyNs(),
        pairs.size(),
        significant,
        significant
            ? "estimated from " + pairs.size() + " client/server pairs"
            : "offset "
                + (-Math.round(intercept))
                + " ns is within its uncertainty ±"
                + uncertainty
                + " ns"
                + (pairs.size() < STRONG_EVIDENCE_PAIRS
                    ? " (plus the margin for " + pairs.size() + " pair(s))"
                    : "")
                + ": not applied");
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
    return slopes.isEmpty()
        ? 0
        : Quantiles.median(slopes.stream().mapToDouble(Double::doubleValue).toArray());
  }
}
