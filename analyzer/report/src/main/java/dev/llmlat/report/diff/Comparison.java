package dev.llmlat.report.diff;

import dev.llmlat.stats.Bootstrap;
import java.util.List;

/**
 * Side B against side A: every quantity's statistics with the difference B − A, its bootstrap
 * interval and a verdict; which components explain the change of TTFT; how the inter-token stalls
 * shifted; what the requests queued behind. Times in ns; shares as fractions of requests.
 *
 * @param quantities TTFT, the server's TTFT, then every component in waterfall order
 * @param explanations the mean first, then one per percentile (the requests around it)
 * @param notes what a reader should know about how the sides were chosen (requests left out)
 */
public record Comparison(
    Side a,
    Side b,
    DiffOptions options,
    double level,
    int resamples,
    List<Quantity> quantities,
    List<Explanation> explanations,
    Stalls stalls,
    QueueCauses queue,
    List<String> notes) {

  public Comparison {
    quantities = List.copyOf(quantities);
    explanations = List.copyOf(explanations);
    notes = List.copyOf(notes);
  }

  public Comparison withNotes(List<String> notes) {
    return new Comparison(
        a, b, options, level, resamples, quantities, explanations, stalls, queue, notes);
  }

  /** Which requests a side holds, and how many. */
  public record Side(String label, int requests) {}

  /** One statistic ("p90", "mean") of one quantity on both sides and its change. */
  public record Statistic(
      String name, double a, double b, Bootstrap.Interval delta, Verdict verdict) {}

  /**
   * TTFT, the server's TTFT or a component, with its statistics; {@code zero} when it is 0 in every
   * request of both sides (a layer neither side has, e.g. a client layer).
   */
  public record Quantity(String name, List<Statistic> statistics, boolean zero) {
    public Quantity {
      statistics = List.copyOf(statistics);
    }

    public Statistic statistic(String name) {
      return statistics.stream()
          .filter(s -> s.name().equals(name))
          .findFirst()
          .orElseThrow(
              () -> new IllegalArgumentException("no statistic " + name + " of " + this.name));
    }
  }

  /**
   * What explains the change of TTFT over some requests: all of them ({@code over} "mean") or those
   * around a percentile ({@code over} "p90", the requests ranked between {@code bandLow} and {@code
   * bandHigh} percent on each side). Components sum to TTFT in every request, so their mean changes
   * add up exactly to {@code ttft}'s. {@code components} are those that moved beyond noise, largest
   * change first; when none did but TTFT did ({@code largestOnly}), the few largest changes.
   */
  public record Explanation(
      String over,
      double bandLow,
      double bandHigh,
      Statistic ttft,
      List<Statistic> components,
      boolean largestOnly) {
    public Explanation {
      components = List.copyOf(components);
    }

    /** The part of TTFT's change the listed components account for. */
    public double explainedNs() {
      return components.stream().mapToDouble(c -> c.delta().estimate()).sum();
    }
  }

  /**
   * Inter-token stalls: the shares of requests with a stall and with each kind of top stall cause
   * ({@code name} "stalled" or the kind; statistic "share"), and the requests' median and p99
   * inter-token gaps (means over the requests that have gaps; empty when a side has none).
   */
  public record Stalls(List<Quantity> shares, List<Quantity> gaps) {
    public Stalls {
      shares = List.copyOf(shares);
      gaps = List.copyOf(gaps);
    }
  }

  /**
   * What the requests queued behind: per {@link dev.llmlat.attribution.QueueBreakdown#KINDS} kind
   * (the quantity's name), the mean over the requests that queued of the share of their queue time
   * of that kind (statistic "share"); {@code requests} per side had a breakdown (none: shares are
   * empty).
   */
  public record QueueCauses(List<Quantity> shares, int requestsA, int requestsB) {
    public QueueCauses {
      shares = List.copyOf(shares);
    }
  }

  public Quantity quantity(String name) {
    return quantities.stream()
        .filter(q -> q.name().equals(name))
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no quantity " + name));
  }
}
