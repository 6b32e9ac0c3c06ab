package dev.llmlat.report.diff;

import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;

/**
 * A {@link Comparison} as an aligned table for a terminal, then what explains TTFT's change, then
 * the stalls.
 */
public final class DiffText {
  private static final String ROW = "%-20s %-6s %11s %11s %11s  %-26s %s%n";
  private static final String STALL_ROW = "%-27s %11s %11s %11s  %-26s %s%n";

  private DiffText() {}

  public static void print(Comparison c, PrintWriter out) {
    out.printf("A: %s  (%d requests)%n", c.a().label(), c.a().requests());
    out.printf("B: %s  (%d requests)%n", c.b().label(), c.b().requests());
    c.notes().forEach(n -> out.println("note: " + n));
    out.printf(
        "B - A with bootstrap %.0f%% intervals (%d resamples of each side); a change counts when its interval leaves 0 out"
            + " and it is at least %s ms or %s%% of A%n%n",
        100 * c.level(),
        c.resamples(),
        number(c.options().noiseFloorNs() / 1e6),
        number(100 * c.options().noiseFloorRelative()));
    out.printf(ROW, "(ms)", "", "A", "B", "B - A", "95% interval", "verdict");
    Comparison.Quantity ttft = c.quantity(SampleComparison.TTFT);
    List<String> zero = new java.util.ArrayList<>();
    for (Comparison.Quantity q : c.quantities()) {
      if (q.zero()) {
        zero.add(q.name());
        continue;
      }
      if (q.name().equals(SampleComparison.SERVER_TTFT)
          && q.statistics().equals(ttft.statistics())) {
        continue; // no client layer: the server's TTFT is TTFT
      }
      String name = label(q.name());
      for (Comparison.Statistic s : q.statistics()) {
        out.printf(
            ROW,
            name,
            s.name(),
            ms(s.a()),
            ms(s.b()),
            signedMs(s.delta().estimate()),
            "[" + signedMs(s.delta().low()) + ", " + signedMs(s.delta().high()) + "]",
            s.verdict());
        name = "";
      }
    }
    if (!zero.isEmpty()) {
      out.println("(0 in every request on both sides: " + String.join(", ", zero) + ")");
    }
    out.println();
    for (Comparison.Explanation e : c.explanations()) {
      out.println(explanation(e));
    }
    out.println();
    out.printf(STALL_ROW, "inter-token stalls", "A", "B", "B - A", "95% interval", "verdict");
    for (Comparison.Quantity q : c.stalls().shares()) {
      Comparison.Statistic s = q.statistics().get(0);
      out.printf(
          STALL_ROW,
          q.name().equals(SampleComparison.STALLED) ? "requests with a stall" : "  " + q.name(),
          percent(s.a()),
          percent(s.b()),
          signedPoints(s.delta().estimate()),
          "[" + signedPoints(s.delta().low()) + ", " + signedPoints(s.delta().high()) + "]",
          s.verdict());
    }
    for (Comparison.Quantity q : c.stalls().gaps()) {
      Comparison.Statistic s = q.statistics().get(0);
      out.printf(
          STALL_ROW,
          (q.name().equals("itl_p50") ? "median gap" : "p99 gap") + ", mean (ms)",
          ms(s.a()),
          ms(s.b()),
          signedMs(s.delta().estimate()),
          "[" + signedMs(s.delta().low()) + ", " + signedMs(s.delta().high()) + "]",
          s.verdict());
    }
    if (!c.queue().shares().isEmpty()) {
      out.println();
      out.printf(STALL_ROW, "share of queue behind", "A", "B", "B - A", "95% interval", "verdict");
      for (Comparison.Quantity q : c.queue().shares()) {
        Comparison.Statistic s = q.statistics().get(0);
        if (!q.zero()) {
          out.printf(
              STALL_ROW,
              "  " + q.name(),
              percent(s.a()),
              percent(s.b()),
              signedPoints(s.delta().estimate()),
              "[" + signedPoints(s.delta().low()) + ", " + signedPoints(s.delta().high()) + "]",
              s.verdict());
        }
      }
      out.printf(
          "(mean share of each request's queue time; %d requests of A and %d of B queued)%n",
          c.queue().requestsA(), c.queue().requestsB());
    }
    out.flush();
  }

  /** "explained by (mean): queue +38.200 ms of +40.100 ms", and its variants. */
  static String explanation(Comparison.Explanation e) {
    String over =
        e.over().equals(SampleComparison.MEAN)
            ? "mean"
            : "requests around "
                + e.over()
                + ", "
                + DiffOptions.name(e.bandLow())
                + "-"
                + DiffOptions.name(e.bandHigh());
    String total = signedMs(e.ttft().delta().estimate()) + " ms";
    StringBuilder parts = new StringBuilder();
    for (Comparison.Statistic s : e.components()) {
      parts
          .append(parts.length() == 0 ? "" : ", ")
          .append(s.name())
          .append(' ')
          .append(signedMs(s.delta().estimate()))
          .append(" ms");
    }
    String head = "explained by (" + over + "): ";
    if (e.components().isEmpty()) {
      return head + "TTFT did not change beyond noise (" + total + ")";
    }
    if (e.largestOnly()) {
      return head
          + "no component moved beyond noise on its own; the largest changes: "
          + parts
          + " of "
          + total;
    }
    if (e.ttft().verdict() == Verdict.NO_CHANGE) {
      return head
          + parts
          + " of "
          + total
          + " (TTFT did not change beyond noise: they offset each other)";
    }
    return head + parts + " of " + total;
  }

  static String label(String quantity) {
    return switch (quantity) {
      case SampleComparison.TTFT -> "TTFT";
      case SampleComparison.SERVER_TTFT -> "server TTFT";
      default -> quantity;
    };
  }

  private static String ms(double ns) {
    return String.format(Locale.ROOT, "%.3f", ns / 1e6);
  }

  private static String signedMs(double ns) {
    return String.format(Locale.ROOT, "%+.3f", ns / 1e6);
  }

  private static String percent(double share) {
    return String.format(Locale.ROOT, "%.1f%%", 100 * share);
  }

  private static String signedPoints(double share) {
    return String.format(Locale.ROOT, "%+.1f pp", 100 * share);
  }

  private static String number(double v) {
    return v == Math.rint(v)
        ? Long.toString((long) v)
        : String.format(Locale.ROOT, "%.3f", v).replaceAll("0+$", "");
  }
}
