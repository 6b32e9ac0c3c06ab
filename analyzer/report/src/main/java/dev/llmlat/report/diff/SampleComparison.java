package dev.llmlat.report.diff;

import dev.llmlat.attribution.QueueBreakdown;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.stats.Bootstrap;
import dev.llmlat.stats.Means;
import dev.llmlat.stats.Quantiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * Compares two samples of requests: per quantity the percentiles and mean of each side, the
 * difference B − A with a two-sample bootstrap interval (each side resampled on its own, whole
 * requests at a time) and a verdict against the noise floor; the components that explain TTFT's
 * change, over all requests and around each percentile; the shift of inter-token stalls. Pure: the
 * samples are in memory.
 */
public final class SampleComparison {
  static final double LEVEL = 0.95;

  /**
   * Half the band of requests around a percentile, in percentage points, at most (p99: p98.5 to
   * p99.5).
   */
  static final double BAND = 5;

  /** Contributions named when no component moved on its own but TTFT did. */
  static final int LARGEST = 3;

  /** Stall cause kinds shown, most frequent first. */
  static final int STALL_KINDS = 8;

  static final String TTFT = "ttft";
  static final String SERVER_TTFT = "server_ttft";
  static final String MEAN = "mean";
  static final String SHARE = "share";
  static final String STALLED = "stalled";
  static final String CAUSE = "top cause: ";

  /** No quantiles: the mean alone. */
  private static final double[] NONE = {};

  private SampleComparison() {}

  public static Comparison compare(Sample a, Sample b, DiffOptions options) {
    checkSize(a, "A", options);
    checkSize(b, "B", options);
    List<String> names = new ArrayList<>(List.of(TTFT, SERVER_TTFT));
    TtftComponent.all().forEach(c -> names.add(c.id()));
    double[][] ca = columns(a);
    double[][] cb = columns(b);
    double[] qs = options.percentiles().stream().mapToDouble(p -> p / 100).toArray();

    // A column 0 in every request needs no resampling; nor does the server's TTFT where it is TTFT
    // (no client layer on either side): rows are drawn whole, so it would come out the same.
    boolean[] zero = new boolean[names.size()];
    List<Integer> resampled = new ArrayList<>();
    boolean serverIsTtft = Arrays.equals(ca[0], ca[1]) && Arrays.equals(cb[0], cb[1]);
    for (int q = 0; q < names.size(); q++) {
      zero[q] = allZero(ca[q]) && allZero(cb[q]);
      if (!zero[q] && !(q == 1 && serverIsTtft)) {
        resampled.add(q);
      }
    }
    Bootstrap.Difference[] deltas =
        resampled.isEmpty()
            ? new Bootstrap.Difference[0]
            : Bootstrap.difference(pick(ca, resampled), pick(cb, resampled), qs, LEVEL);
    List<Comparison.Quantity> quantities = new ArrayList<>();
    for (int q = 0; q < names.size(); q++) {
      int at = resampled.indexOf(q == 1 && serverIsTtft ? 0 : q);
      List<Comparison.Statistic> statistics = new ArrayList<>();
      double[] sa = sorted(ca[q]);
      double[] sb = sorted(cb[q]);
      for (int s = 0; s <= qs.length; s++) {
        boolean mean = s == qs.length;
        double va = mean ? Means.of(sa) : Quantiles.ofSorted(sa, qs[s]);
        double vb = mean ? Means.of(sb) : Quantiles.ofSorted(sb, qs[s]);
        Bootstrap.Interval d =
            at < 0
                ? new Bootstrap.Interval(0, 0, 0)
                : mean ? deltas[at].mean() : deltas[at].quantiles().get(s);
        statistics.add(
            new Comparison.Statistic(
                mean ? MEAN : DiffOptions.name(options.percentiles().get(s)),
                va,
                vb,
                d,
                Verdict.of(d, options.floorNs(va))));
      }
      quantities.add(new Comparison.Quantity(names.get(q), statistics, zero[q]));
    }

    List<Comparison.Explanation> explanations = new ArrayList<>();
    List<Comparison.Statistic> components = new ArrayList<>();
    for (int c = 0; c < TtftComponent.all().size(); c++) {
      Comparison.Statistic m = quantities.get(2 + c).statistic(MEAN);
      components.add(
          new Comparison.Statistic(
              TtftComponent.all().get(c).id(), m.a(), m.b(), m.delta(), m.verdict()));
    }
    explanations.add(explain(MEAN, 0, 100, quantities.get(0).statistic(MEAN), components));
    for (double p : options.percentiles()) {
      explanations.add(aroundPercentile(p, ca, cb, zero, options));
    }
    return new Comparison(
        new Comparison.Side(a.label(), a.size()),
        new Comparison.Side(b.label(), b.size()),
        options,
        LEVEL,
        Bootstrap.RESAMPLES,
        quantities,
        explanations,
        stalls(a, b, options),
        queue(a, b),
        List.of());
  }

  private static void checkSize(Sample s, String side, DiffOptions options) {
    int needed = options.requiredRequests();
    if (s.size() >= needed) {
      return;
    }
    double highest = options.percentiles().get(options.percentiles().size() - 1);
    List<String> supported =
        options.percentiles().stream()
            .filter(p -> DiffOptions.requiredRequests(p) <= s.size())
            .map(DiffOptions::name)
            .toList();
    throw new IllegalArgumentException(
        "side "
            + side
            + " ("
            + s.label()
            + ") has "
            + s.size()
            + " requests; "
            + DiffOptions.name(highest)
            + " needs at least "
            + needed
            + " on each side ("
            + DiffOptions.TAIL_REQUESTS
            + " above it, so its interval does not rest on a handful of the slowest requests)"
            + (supported.isEmpty()
                ? ""
                : "; " + s.size() + " requests support " + String.join(", ", supported))
            + ": select more requests or ask for lower percentiles");
  }

  /** [quantity][request]: TTFT, the server's TTFT, the components. */
  private static double[][] columns(Sample s) {
    double[][] c = new double[2 + TtftComponent.all().size()][s.size()];
    for (int r = 0; r < s.size(); r++) {
      c[0][r] = s.ttftNs(r);
      c[1][r] = s.serverTtftNs(r);
      for (int k = 0; k < TtftComponent.all().size(); k++) {
        c[2 + k][r] = s.componentNs(k, r);
      }
    }
    return c;
  }

  private static double[][] pick(double[][] columns, List<Integer> which) {
    return which.stream().map(q -> columns[q]).toArray(double[][]::new);
  }

  private static boolean allZero(double[] values) {
    for (double v : values) {
      if (v != 0) {
        return false;
      }
    }
    return true;
  }

  private static double[] sorted(double[] values) {
    double[] s = values.clone();
    Arrays.sort(s);
    return s;
  }

  /**
   * The components' mean changes over the requests around percentile {@code p} of TTFT on each
   * side: what moved for the requests that make that percentile.
   */
  private static Comparison.Explanation aroundPercentile(
      double p, double[][] ca, double[][] cb, boolean[] zero, DiffOptions options) {
    double half = Math.min(BAND, (100 - p) / 2);
    double low = p - half;
    double high = p + half;
    List<Integer> used = new ArrayList<>(List.of(0));
    for (int q = 2; q < zero.length; q++) {
      if (!zero[q]) {
        used.add(q);
      }
    }
    double[][] ba = band(ca, used, low, high);
    double[][] bb = band(cb, used, low, high);
    Bootstrap.Difference[] d = Bootstrap.difference(ba, bb, NONE, LEVEL);
    Comparison.Statistic ttft = null;
    List<Comparison.Statistic> components = new ArrayList<>();
    for (int i = 0; i < used.size(); i++) {
      double ma = Means.of(ba[i]);
      Comparison.Statistic s =
          new Comparison.Statistic(
              i == 0 ? TTFT : TtftComponent.all().get(used.get(i) - 2).id(),
              ma,
              Means.of(bb[i]),
              d[i].mean(),
              Verdict.of(d[i].mean(), options.floorNs(ma)));
      if (i == 0) {
        ttft = s;
      } else {
        components.add(s);
      }
    }
    return explain(DiffOptions.name(p), low, high, ttft, components);
  }

  /**
   * The given columns of the requests ranked between {@code low} and {@code high} percent by TTFT
   * (column 0).
   */
  private static double[][] band(double[][] columns, List<Integer> used, double low, double high) {
    double[] ttft = columns[0];
    int n = ttft.length;
    int[] byTtft =
        IntStream.range(0, n)
            .boxed()
            .sorted(Comparator.comparingDouble(r -> ttft[r]))
            .mapToInt(Integer::intValue)
            .toArray();
    int from = (int) Math.ceil((n - 1) * low / 100);
    int to = Math.max(from, (int) Math.floor((n - 1) * high / 100));
    double[][] out = new double[used.size()][to - from + 1];
    for (int i = 0; i < used.size(); i++) {
      for (int r = from; r <= to; r++) {
        out[i][r - from] = columns[used.get(i)][byTtft[r]];
      }
    }
    return out;
  }

  /**
   * The components that moved beyond noise, largest change first; when none did but TTFT did, the
   * largest contributions in TTFT's direction until they make most (80%) of its change.
   */
  private static Comparison.Explanation explain(
      String over,
      double low,
      double high,
      Comparison.Statistic ttft,
      List<Comparison.Statistic> components) {
    Comparator<Comparison.Statistic> largest =
        Comparator.comparingDouble(s -> -Math.abs(s.delta().estimate()));
    List<Comparison.Statistic> moved =
        components.stream().filter(c -> c.verdict() != Verdict.NO_CHANGE).sorted(largest).toList();
    if (!moved.isEmpty() || ttft.verdict() == Verdict.NO_CHANGE) {
      return new Comparison.Explanation(over, low, high, ttft, moved, false);
    }
    double total = ttft.delta().estimate();
    double sign = Math.signum(total);
    List<Comparison.Statistic> share = new ArrayList<>();
    double sum = 0;
    for (Comparison.Statistic c :
        components.stream()
            .sorted(Comparator.comparingDouble(s -> -sign * s.delta().estimate()))
            .toList()) {
      if (share.size() == LARGEST
          || sign * c.delta().estimate() <= 0
          || Math.abs(sum) >= 0.8 * Math.abs(total)) {
        break;
      }
      share.add(c);
      sum += c.delta().estimate();
    }
    return new Comparison.Explanation(over, low, high, ttft, share, true);
  }

  private static Comparison.Stalls stalls(Sample a, Sample b, DiffOptions options) {
    Map<String, double[]> kinds = new LinkedHashMap<>(); // kind -> share on A, on B
    count(a, kinds, 0);
    count(b, kinds, 1);
    List<String> top =
        kinds.entrySet().stream()
            .sorted(
                Comparator.<Map.Entry<String, double[]>>comparingDouble(
                        e -> -Math.max(e.getValue()[0], e.getValue()[1]))
                    .thenComparing(Map.Entry::getKey))
            .limit(STALL_KINDS)
            .map(Map.Entry::getKey)
            .toList();
    List<String> names = new ArrayList<>(List.of(STALLED));
    top.forEach(k -> names.add(CAUSE + k));
    double[][] sa = shares(a, top);
    double[][] sb = shares(b, top);
    Bootstrap.Difference[] d = Bootstrap.difference(sa, sb, NONE, LEVEL);
    List<Comparison.Quantity> shares = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      // a share has no noise floor: its interval alone says whether it moved
      Comparison.Statistic s =
          new Comparison.Statistic(
              SHARE, Means.of(sa[i]), Means.of(sb[i]), d[i].mean(), Verdict.of(d[i].mean(), 0));
      shares.add(
          new Comparison.Quantity(names.get(i), List.of(s), allZero(sa[i]) && allZero(sb[i])));
    }
    double[][] ga = gaps(a);
    double[][] gb = gaps(b);
    List<Comparison.Quantity> gaps = new ArrayList<>();
    if (ga[0].length > 0 && gb[0].length > 0) {
      Bootstrap.Difference[] g = Bootstrap.difference(ga, gb, NONE, LEVEL);
      String[] gapNames = {"itl_p50", "itl_p99"};
      for (int i = 0; i < gapNames.length; i++) {
        double ma = Means.of(ga[i]);
        gaps.add(
            new Comparison.Quantity(
                gapNames[i],
                List.of(
                    new Comparison.Statistic(
                        MEAN,
                        ma,
                        Means.of(gb[i]),
                        g[i].mean(),
                        Verdict.of(g[i].mean(), options.floorNs(ma)))),
                false));
      }
    }
    return new Comparison.Stalls(shares, gaps);
  }

  /**
   * Shares of the queue by kind, over the requests of each side that queued and have a breakdown.
   */
  private static Comparison.QueueCauses queue(Sample a, Sample b) {
    double[][] qa = queueShares(a);
    double[][] qb = queueShares(b);
    List<Comparison.Quantity> shares = new ArrayList<>();
    if (qa[0].length > 0 && qb[0].length > 0) {
      Bootstrap.Difference[] d = Bootstrap.difference(qa, qb, NONE, LEVEL);
      for (int k = 0; k < QueueBreakdown.KINDS.size(); k++) {
        Comparison.Statistic s =
            new Comparison.Statistic(
                SHARE, Means.of(qa[k]), Means.of(qb[k]), d[k].mean(), Verdict.of(d[k].mean(), 0));
        shares.add(
            new Comparison.Quantity(
                QueueBreakdown.KINDS.get(k), List.of(s), allZero(qa[k]) && allZero(qb[k])));
      }
    }
    return new Comparison.QueueCauses(shares, qa[0].length, qb[0].length);
  }

  /**
   * Per kind, the share of each request's queue time of that kind (requests with a breakdown only).
   */
  private static double[][] queueShares(Sample s) {
    int kinds = QueueBreakdown.KINDS.size();
    int[] with =
        IntStream.range(0, s.size())
            .filter(
                r -> {
                  long sum = 0;
                  for (int k = 0; k < kinds; k++) {
                    sum += s.queueNs(k, r);
                  }
                  return sum > 0;
                })
            .toArray();
    double[][] c = new double[kinds][with.length];
    for (int i = 0; i < with.length; i++) {
      long sum = 0;
      for (int k = 0; k < kinds; k++) {
        sum += s.queueNs(k, with[i]);
      }
      for (int k = 0; k < kinds; k++) {
        c[k][i] = s.queueNs(k, with[i]) / (double) sum;
      }
    }
    return c;
  }

  private static void count(Sample s, Map<String, double[]> kinds, int side) {
    for (int r = 0; r < s.size(); r++) {
      if (!s.stallKind(r).isEmpty()) {
        kinds.computeIfAbsent(s.stallKind(r), k -> new double[2])[side] += 1.0 / s.size();
      }
    }
  }

  /** 1 or 0 per request: has a stall; then has each kind as its top cause. */
  private static double[][] shares(Sample s, List<String> kinds) {
    double[][] c = new double[1 + kinds.size()][s.size()];
    for (int r = 0; r < s.size(); r++) {
      c[0][r] = s.itlStalls(r) > 0 ? 1 : 0;
      int k = kinds.indexOf(s.stallKind(r));
      if (k >= 0) {
        c[1 + k][r] = 1;
      }
    }
    return c;
  }

  /** The median and p99 inter-token gap of each request that has gaps. */
  private static double[][] gaps(Sample s) {
    int[] with = IntStream.range(0, s.size()).filter(r -> s.itlCount(r) > 0).toArray();
    double[][] c = new double[2][with.length];
    for (int i = 0; i < with.length; i++) {
      c[0][i] = s.itlP50Ns(with[i]);
      c[1][i] = s.itlP99Ns(with[i]);
    }
    return c;
  }
}
