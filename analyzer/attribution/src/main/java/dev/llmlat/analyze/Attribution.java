package dev.llmlat.analyze;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One request's TTFT split into contiguous components that sum exactly to {@link #ttftNs}, its
 * inter-token gaps with causes, the clock corrections applied, and what the engine did while the request
 * queued ({@link QueueBreakdown}, its parts summing exactly to {@code queue}). {@code startLayer} is where TTFT
 * starts ({@code client}, {@code gateway} or {@code engine}); {@code serverTtftNs} is the TTFT the
 * server side alone saw (equal to {@code ttftNs} unless a client layer started the trace).
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
    long serverTtftNs,
    Map<String, Long> components,
    List<Segment> criticalPath,
    List<Gap> itl,
    List<ClockCorrection> corrections,
    long promptTokens,
    long outputTokens,
    int prefillChunks,
    int preemptions,
    List<String> notes,
    QueueBreakdown queueBreakdown) {

  /**
   * The components, in waterfall order. {@code client_to_gateway} and {@code gateway_to_client} are
   * non-zero only when the trace starts at a client layer (TTFT is then the client's).
   */
  public static final List<String> COMPONENTS = List.of("client_to_gateway", "gateway_in", "network_in", "engine_in", "queue",
      "kv_transfer", "prefill_cpu", "prefill_gpu", "batch_interference", "first_sample", "network_out", "gateway_out",
      "gateway_to_client", "unattributed");

  /** The {@code llm_request_attribution} column of a component: {@code kv_transfer} is {@code KvTransferNs}. */
  public static String column(String component) {
    StringBuilder out = new StringBuilder();
    for (String word : component.split("_")) {
      out.append(Character.toUpperCase(word.charAt(0))).append(word, 1, word.length());
    }
    return out.append("Ns").toString();
  }

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
    queueBreakdown = queueBreakdown == null ? QueueBreakdown.NONE : queueBreakdown;
    long queue = components.getOrDefault("queue", 0L);
    if (!queueBreakdown.parts().isEmpty() && queueBreakdown.totalNs() != queue) {
      throw new IllegalStateException("queue breakdown of " + traceId + " sums to " + queueBreakdown.totalNs() + " ns, queue is "
          + queue + " ns");
    }
  }

  /** Without a queue breakdown (attributions built by hand). */
  public Attribution(String traceId, String requestId, String model, String service, String engineInstance, String engineAdapter,
      long arrivalNs, String startLayer, long ttftNs, long serverTtftNs, Map<String, Long> components, List<Segment> criticalPath,
      List<Gap> itl, List<ClockCorrection> corrections, long promptTokens, long outputTokens, int prefillChunks, int preemptions,
      List<String> notes) {
    this(traceId, requestId, model, service, engineInstance, engineAdapter, arrivalNs, startLayer, ttftNs, serverTtftNs, components,
        criticalPath, itl, corrections, promptTokens, outputTokens, prefillChunks, preemptions, notes, QueueBreakdown.NONE);
  }

  public long component(String name) {
    return components.getOrDefault(name, 0L);
  }

  public long[] gapsNs() {
    return itl.stream().mapToLong(Gap::gapNs).toArray();
  }
}
