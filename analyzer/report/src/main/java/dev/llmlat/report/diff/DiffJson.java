package dev.llmlat.report.diff;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A {@link Comparison} as JSON (README, "llmlat diff", shows the shape). Times are in milliseconds
 * ({@code _ms}), shares are fractions of requests; every change is B − A with its interval's {@code
 * low}/{@code high} and a {@code verdict} of "up", "down" or "no change".
 */
public final class DiffJson {
  private static final ObjectMapper JSON = new ObjectMapper();

  private DiffJson() {}

  public static String of(Comparison c) {
    ObjectNode root = JSON.createObjectNode();
    side(root.putObject("a"), c.a());
    side(root.putObject("b"), c.b());
    ArrayNode notes = root.putArray("notes");
    c.notes().forEach(notes::add);
    root.put("level", c.level());
    root.put("resamples", c.resamples());
    ObjectNode floor = root.putObject("noise_floor");
    floor.put("ms", c.options().noiseFloorNs() / 1e6);
    floor.put("relative", c.options().noiseFloorRelative());
    ArrayNode percentiles = root.putArray("percentiles");
    c.options().percentiles().forEach(percentiles::add);
    ArrayNode quantities = root.putArray("quantities");
    for (Comparison.Quantity q : c.quantities()) {
      quantity(quantities.addObject(), q, 1e6, "_ms");
    }
    ArrayNode explained = root.putArray("explained_by");
    for (Comparison.Explanation e : c.explanations()) {
      ObjectNode o = explained.addObject();
      o.put("over", e.over());
      if (!e.over().equals(SampleComparison.MEAN)) {
        o.putArray("band").add(e.bandLow()).add(e.bandHigh());
      }
      statistic(o.putObject("ttft"), e.ttft(), 1e6, "_ms");
      o.put("largest_only", e.largestOnly());
      o.put("explained_ms", e.explainedNs() / 1e6);
      ArrayNode components = o.putArray("components");
      for (Comparison.Statistic s : e.components()) {
        statistic(components.addObject(), s, 1e6, "_ms");
      }
    }
    ObjectNode stalls = root.putObject("stalls");
    ArrayNode shares = stalls.putArray("shares");
    for (Comparison.Quantity q : c.stalls().shares()) {
      quantity(shares.addObject(), q, 1, "");
    }
    ArrayNode gaps = stalls.putArray("gaps");
    for (Comparison.Quantity q : c.stalls().gaps()) {
      quantity(gaps.addObject(), q, 1e6, "_ms");
    }
    ObjectNode queue = root.putObject("queue_causes");
    queue.put("requests_a", c.queue().requestsA());
    queue.put("requests_b", c.queue().requestsB());
    ArrayNode queueShares = queue.putArray("shares");
    for (Comparison.Quantity q : c.queue().shares()) {
      quantity(queueShares.addObject(), q, 1, "");
    }
    return root.toPrettyString() + "\n";
  }

  private static void side(ObjectNode o, Comparison.Side s) {
    o.put("label", s.label());
    o.put("requests", s.requests());
  }

  private static void quantity(ObjectNode o, Comparison.Quantity q, double unit, String suffix) {
    o.put("name", q.name());
    o.put("zero", q.zero());
    ArrayNode statistics = o.putArray("statistics");
    for (Comparison.Statistic s : q.statistics()) {
      statistic(statistics.addObject(), s, unit, suffix);
    }
  }

  private static void statistic(ObjectNode o, Comparison.Statistic s, double unit, String suffix) {
    o.put("name", s.name());
    o.put("a" + suffix, s.a() / unit);
    o.put("b" + suffix, s.b() / unit);
    o.put("delta" + suffix, s.delta().estimate() / unit);
    o.put("low" + suffix, s.delta().low() / unit);
    o.put("high" + suffix, s.delta().high() / unit);
    o.put("verdict", s.verdict().toString());
  }
}
