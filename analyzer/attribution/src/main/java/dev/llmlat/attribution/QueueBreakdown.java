package dev.llmlat.attribution;

import java.util.List;

/**
 * What the engine did while a request waited in its queue: parts that sum exactly to the {@code
 * queue} component, largest first, and the scheduler limit that kept it waiting where the engine's
 * steps report scheduler state ("" when none binds or none is reported).
 */
public record QueueBreakdown(List<Part> parts, String limit) {
  /** Behind another request's prefill ({@code traceId} names it). */
  public static final String PREFILL = "prefill";

  /** Behind decode steps ({@code batch} is the largest batch among them). */
  public static final String DECODE = "decode";

  /** The engine loop with no step running. */
  public static final String BETWEEN_STEPS = "between_steps";

  /** Waiting to resume after a preemption. */
  public static final String PREEMPTED = "preempted";

  /** The engine shows no steps: the wait cannot be explained. */
  public static final String NO_STEPS = "no_steps";

  public static final List<String> KINDS =
      List.of(PREFILL, DECODE, BETWEEN_STEPS, PREEMPTED, NO_STEPS);

  public static final QueueBreakdown NONE = new QueueBreakdown(List.of(), "");

  /**
   * One part of the wait.
   *
   * @param kind one of {@link #KINDS}
   * @param cause the part as {@code explain} words it
   * @param traceId the blocking request ({@link #PREFILL} only, else "")
   * @param tokens that request's prefill tokens (0 when unknown)
   * @param batch the largest decode batch ({@link #DECODE} only, else 0)
   * @param steps how many steps the part spans (0 for parts that are not steps)
   */
  public record Part(
      String kind, String cause, long ns, String traceId, long tokens, int batch, int steps) {}

  public QueueBreakdown {
    parts = List.copyOf(parts);
  }

  public long totalNs() {
    return parts.stream().mapToLong(Part::ns).sum();
  }

  /** The sum of the parts of one kind. */
  public long ns(String kind) {
    return parts.stream().filter(p -> p.kind().equals(kind)).mapToLong(Part::ns).sum();
  }

  /** The prefill part that blocked longest, or null. */
  public Part longestBlocker() {
    return parts.stream()
        .filter(p -> p.kind().equals(PREFILL))
        .max(java.util.Comparator.comparingLong(Part::ns))
        .orElse(null);
  }
}
