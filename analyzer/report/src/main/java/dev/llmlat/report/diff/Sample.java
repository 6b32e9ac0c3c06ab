package dev.llmlat.report.diff;

import dev.llmlat.attribution.QueueBreakdown;
import dev.llmlat.semconv.TtftComponent;
import java.util.Arrays;

/**
 * One side of a comparison: its requests' rows of {@code llm_request_attribution}, held by column
 * (a side may hold a day of traffic). Components are in {@link TtftComponent#all()} order and sum
 * exactly to each request's TTFT, which the builder checks: the explanation of a TTFT change by its
 * components rests on it.
 */
public final class Sample {
  private final String label;
  private final int size;
  private final long[] ttftNs;
  private final long[] serverTtftNs;
  private final long[][] componentsNs;
  private final int[] itlStalls;
  private final String[] stallKinds;
  private final int[] itlCounts;
  private final long[] itlP50Ns;
  private final long[] itlP99Ns;

  /**
   * Per {@link QueueBreakdown#KINDS} kind, each request's queue time of that kind (0 where not
   * recorded).
   */
  private final long[][] queueNs;

  private Sample(Builder b) {
    this.label = b.label;
    this.size = b.size;
    this.ttftNs = Arrays.copyOf(b.ttftNs, size);
    this.serverTtftNs = Arrays.copyOf(b.serverTtftNs, size);
    this.componentsNs = new long[b.componentsNs.length][];
    for (int c = 0; c < componentsNs.length; c++) {
      componentsNs[c] = Arrays.copyOf(b.componentsNs[c], size);
    }
    this.itlStalls = Arrays.copyOf(b.itlStalls, size);
    this.stallKinds = Arrays.copyOf(b.stallKinds, size);
    this.itlCounts = Arrays.copyOf(b.itlCounts, size);
    this.itlP50Ns = Arrays.copyOf(b.itlP50Ns, size);
    this.itlP99Ns = Arrays.copyOf(b.itlP99Ns, size);
    this.queueNs = new long[b.queueNs.length][];
    for (int k = 0; k < queueNs.length; k++) {
      queueNs[k] = Arrays.copyOf(b.queueNs[k], size);
    }
  }

  public static Builder builder(String label) {
    return new Builder(label);
  }

  /** What the side is, for people ("service.version=1.5.0", a time window, a store). */
  public String label() {
    return label;
  }

  /** Requests. */
  public int size() {
    return size;
  }

  long ttftNs(int request) {
    return ttftNs[request];
  }

  long serverTtftNs(int request) {
    return serverTtftNs[request];
  }

  /** Component {@code component} (index into {@link TtftComponent#all()}) of a request. */
  long componentNs(int component, int request) {
    return componentsNs[component][request];
  }

  int itlStalls(int request) {
    return itlStalls[request];
  }

  /**
   * The kind of the request's top stall cause (grouped as the report groups them), "" when none.
   */
  String stallKind(int request) {
    return stallKinds[request];
  }

  int itlCount(int request) {
    return itlCounts[request];
  }

  long itlP50Ns(int request) {
    return itlP50Ns[request];
  }

  long itlP99Ns(int request) {
    return itlP99Ns[request];
  }

  /** The request's queue time of kind {@code kind} (index into {@link QueueBreakdown#KINDS}). */
  long queueNs(int kind, int request) {
    return queueNs[kind][request];
  }

  /** Adds requests one at a time. */
  public static final class Builder {
    private final String label;
    private int size;
    private long[] ttftNs = new long[64];
    private long[] serverTtftNs = new long[64];
    private final long[][] componentsNs = new long[TtftComponent.all().size()][64];
    private int[] itlStalls = new int[64];
    private String[] stallKinds = new String[64];
    private int[] itlCounts = new int[64];
    private long[] itlP50Ns = new long[64];
    private long[] itlP99Ns = new long[64];
    private final long[][] queueNs = new long[QueueBreakdown.KINDS.size()][64];

    private Builder(String label) {
      this.label = label;
    }

    /**
     * A request's TTFT and components (in {@link TtftComponent#all()} order), with no inter-token
     * gaps.
     */
    public Builder add(long ttftNs, long serverTtftNs, long[] componentsNs) {
      return add(ttftNs, serverTtftNs, componentsNs, 0, 0, 0, 0, "");
    }

    /**
     * A request: TTFT, the server's TTFT, the components (in {@link TtftComponent#all()} order),
     * its inter-token gaps (how many, their median and p99), the gaps with a named cause and the
     * kind of the top cause ("" when none).
     */
    public Builder add(
        long ttftNs,
        long serverTtftNs,
        long[] componentsNs,
        int itlCount,
        long itlP50Ns,
        long itlP99Ns,
        int itlStalls,
        String stallKind) {
      if (componentsNs.length != this.componentsNs.length) {
        throw new IllegalArgumentException(
            label
                + ": a request has "
                + this.componentsNs.length
                + " components "
                + TtftComponent.all()
                + ", got "
                + componentsNs.length);
      }
      long sum = 0;
      for (long c : componentsNs) {
        sum += c;
      }
      if (sum != ttftNs) {
        throw new IllegalArgumentException(
            label
                + ": request "
                + (size + 1)
                + "'s components sum to "
                + sum
                + " ns, its TTFT is "
                + ttftNs
                + " ns (rows of llm_request_attribution always add up: was the table written by llmlat analyze?)");
      }
      if (size == this.ttftNs.length) {
        grow();
      }
      this.ttftNs[size] = ttftNs;
      this.serverTtftNs[size] = serverTtftNs;
      for (int c = 0; c < componentsNs.length; c++) {
        this.componentsNs[c][size] = componentsNs[c];
      }
      this.itlCounts[size] = itlCount;
      this.itlP50Ns[size] = itlP50Ns;
      this.itlP99Ns[size] = itlP99Ns;
      this.itlStalls[size] = itlStalls;
      this.stallKinds[size] = stallKind;
      size++;
      return this;
    }

    /**
     * The queue breakdown of the request added last: its queue time per {@link
     * QueueBreakdown#KINDS} kind, in that order (they sum to its queue component, or to 0 for rows
     * without a breakdown).
     */
    public Builder queue(long[] byKind) {
      if (size == 0 || byKind.length != queueNs.length) {
        throw new IllegalArgumentException(
            label
                + ": a queue breakdown has "
                + queueNs.length
                + " kinds "
                + QueueBreakdown.KINDS
                + " and follows its request");
      }
      for (int k = 0; k < byKind.length; k++) {
        queueNs[k][size - 1] = byKind[k];
      }
      return this;
    }

    private void grow() {
      int n = size * 2;
      ttftNs = Arrays.copyOf(ttftNs, n);
      serverTtftNs = Arrays.copyOf(serverTtftNs, n);
      for (int c = 0; c < componentsNs.length; c++) {
        componentsNs[c] = Arrays.copyOf(componentsNs[c], n);
      }
      itlStalls = Arrays.copyOf(itlStalls, n);
      stallKinds = Arrays.copyOf(stallKinds, n);
      itlCounts = Arrays.copyOf(itlCounts, n);
      itlP50Ns = Arrays.copyOf(itlP50Ns, n);
      itlP99Ns = Arrays.copyOf(itlP99Ns, n);
      for (int k = 0; k < queueNs.length; k++) {
        queueNs[k] = Arrays.copyOf(queueNs[k], n);
      }
    }

    public Sample build() {
      return new Sample(this);
    }
  }
}
