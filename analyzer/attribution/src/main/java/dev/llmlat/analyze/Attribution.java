package dev.llmlat.analyze;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One request's TTFT split into contiguous components that sum exactly to {@link #ttftNs}, its
 * inter-token gaps with causes, and the clock corrections applied.
 */
public record Attribution(
    String traceId,
    String requestId,
    String model,
    String service,
    String engineInstance,
    String engineAdapter,
    long arrivalNs,
    String startLayer,
    long ttftNs,
    Map<String, Long> components,
    List<Segment> criticalPath,
    List<Gap> itl,
    List<ClockCorrection> corrections,
    long promptTokens,
    long outputTokens,
    int prefillChunks,
    int preemptions,
    List<String> notes) {

  /** The components, in waterfall order. */
  public static final List<String> COMPONENTS = List.of("gateway_in", "network_in", "engine_in", "queue", "kv_transfer", "prefill_cpu", "prefill_gpu",
      "batch_interference", "first_sample", "network_out", "gateway_out", "unattributed");

  /** A stretch of the critical path: which component, which span explains it, when. */
  public record Segment(String component, String span, long startNs, long endNs) {}

  /** One inter-token gap: between tokens {@code index-1} and {@code index}; cause when it stands out. */
  public record Gap(int index, long startNs, long gapNs, String cause) {}

  public Attribution {
    components = new LinkedHashMap<>(components);
    long sum = components.values().stream().mapToLong(Long::longValue).sum();
    if (sum != ttftNs) {
      throw new IllegalStateException("components of " + traceId + " sum to " + sum + " ns, TTFT is " + ttftNs + " ns");
    }
  }

  public long component(String name) {
    return components.getOrDefault(name, 0L);
  }

  public long[] gapsNs() {
    return itl.stream().mapToLong(Gap::gapNs).toArray();
  }
}
