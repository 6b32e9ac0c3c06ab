package dev.llmlat.attribution;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The attribution core's entry point, over spans in memory (no store): align the layers' clocks,
 * find the requests, attribute each one's TTFT and inter-token gaps. {@code analyze} reads spans
 * from the store and calls this; so can anything else that holds spans.
 */
public final class TraceAttribution {
  private TraceAttribution() {}

  /**
   * Names of the steps some engines copy into each request's trace (vLLM, SGLang): the queue
   * breakdown reads other requests' copies.
   */
  public static final java.util.Set<String> PER_REQUEST_STEP_NAMES = StepIndex.PER_REQUEST_STEPS;

  /** Whether a span is a GPU step span (one per rank under tensor parallelism). */
  public static boolean isGpuStep(SpanRecord s) {
    return LayerNames.STEP.equals(s.name()) && LayerNames.GPU.equals(s.layer());
  }

  /**
   * Whether a span is a collective kernel of a GPU step, read from {@code gpu_kernels} to match
   * ranks.
   */
  public static boolean isCollectiveKernel(SpanRecord s) {
    return RequestView.Index.isCollectiveKernel(s);
  }

  /** The request spans among {@code spans}, in the order they started (any engine convention). */
  public static List<SpanRecord> requests(Collection<SpanRecord> spans) {
    return new RequestView.Index(new ArrayList<>(spans)).requests();
  }

  /**
   * Spans with every host's clock corrected (see {@link ClockSkewEstimator}), and the corrections.
   */
  public record Aligned(List<SpanRecord> spans, Map<String, ClockCorrection> corrections) {}

  /**
   * Joins the halves of requests an engine split over traces, assigns replica instances, estimates
   * every clock domain's correction and applies those that apply.
   */
  public static Aligned alignClocks(Collection<SpanRecord> spans) {
    List<SpanRecord> all = ReplicaInstances.assign(JoinSplitTraces.join(new ArrayList<>(spans)));
    Map<String, ClockCorrection> corrections = ClockSkewEstimator.estimate(all);
    if (corrections.values().stream().noneMatch(ClockCorrection::applied)) {
      return new Aligned(all, corrections); // nothing moves
    }
    List<SpanRecord> aligned = new ArrayList<>(all.size());
    for (SpanRecord s : all) {
      ClockCorrection c = corrections.get(s.clockDomain());
      aligned.add(c == null ? s : s.shifted(c.offsetAt(s.startNs())));
    }
    return new Aligned(aligned, corrections);
  }

  /** Aligns and attributes every request among {@code spans}. */
  public static List<Attribution> attribute(Collection<SpanRecord> spans) {
    return attribute(spans, traceId -> true);
  }

  /**
   * Aligns all of {@code spans} (every pair is evidence) and attributes the requests {@code which}
   * selects.
   */
  public static List<Attribution> attribute(
      Collection<SpanRecord> spans, java.util.function.Predicate<String> which) {
    return attribute(alignClocks(spans), which);
  }

  /** Attributes the requests {@code which} selects among spans already aligned. */
  public static List<Attribution> attribute(
      Aligned alignment, java.util.function.Predicate<String> which) {
    return attribute(alignment, which, LlmlatAttributes.TENANT);
  }

  /**
   * Attributes the requests {@code which} selects among spans already aligned, reading each
   * request's tenant from the span attribute {@code tenantKey} of its spans (the client's, the
   * gateway's or the engine's).
   */
  public static List<Attribution> attribute(
      Aligned alignment, java.util.function.Predicate<String> which, String tenantKey) {
    return attribute(alignment, which, tenantKey, true);
  }

  /**
   * Likewise; with {@code queueBreakdown} false the queues are not split by what the engine did
   * meanwhile (the baseline {@code bench analyze} measures the breakdown's cost against).
   */
  public static List<Attribution> attribute(
      Aligned alignment,
      java.util.function.Predicate<String> which,
      String tenantKey,
      boolean queueBreakdown) {
    Map<String, ClockCorrection> corrections = alignment.corrections();
    List<SpanRecord> aligned = alignment.spans();
    RequestView.Index index = new RequestView.Index(aligned, tenantKey, queueBreakdown);
    List<ClockCorrection> used = corrections.values().stream().filter(c -> c.pairs() > 0).toList();
    // the index is read-only from here: requests are attributed in parallel
    return index.requests().parallelStream()
        .filter(request -> which.test(request.traceId()))
        .map(
            request -> {
              RequestView v = index.view(request);
              return TtftAttributor.attribute(v, index, used);
            })
        .toList();
  }
}
