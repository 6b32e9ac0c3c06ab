package dev.llmlat.attribution;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One request's TTFT split into contiguous components that sum exactly to {@link #ttftNs}, its
 * inter-token gaps with causes, the clock corrections applied, and what the engine did while the
 * request queued ({@link QueueBreakdown}, its parts summing exactly to {@code queue}), and under
 * tensor parallelism the late ranks its steps waited for ({@code rankWaits}, summing exactly to
 * {@code rank_wait}), and how the gateway got its upstream connection ({@code upstream}: the pool,
 * new or reused). {@code tenant} is whom it was served for ("" when no span names one); {@code
 * tenantCauses} is how much of its queue (behind other requests' prefill) and batch interference
 * each tenant's requests caused. {@code startLayer} is where TTFT starts ({@code client}, {@code
 * gateway} or {@code engine}); {@code serverTtftNs} is the TTFT the server side alone saw (equal to
 * {@code ttftNs} unless a client layer started the trace).
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
    QueueBreakdown queueBreakdown,
    List<InstancePart> instanceParts,
    List<RankWait> rankWaits,
    UpstreamConnection upstream,
    String tenant,
    List<TenantShare> tenantCauses) {

  /**
   * The components, in waterfall order. {@code client_to_gateway} and {@code gateway_to_client} are
   * non-zero only when the trace starts at a client layer (TTFT is then the client's). {@code
   * decode_wait} is non-zero only for disaggregated prefill/decode: the KV cache is ready on the
   * prefill instance and the decode instance is not receiving it yet; {@code kv_transfer} is then
   * the wire time alone. {@code rank_wait} is non-zero only for steps several ranks ran (tensor
   * parallelism): the time the step's collectives waited for a late rank, taken out of {@code
   * prefill_gpu} (and {@code prefill_cpu} beyond the GPU's busy time). The way in through a gateway
   * is {@code gateway_in} (the gateway's own handling: routing, filters, its HTTP client's work),
   * the wait for an upstream connection from the client's pool, TCP connect and TLS (non-zero only
   * where the extension's connection hooks saw the call), and {@code network_in}, the wire: from
   * the request's headers written (else the CLIENT span's start) to the engine's arrival.
   */
  public static final List<String> COMPONENTS =
      List.of(
          "client_to_gateway",
          "gateway_in",
          "upstream_pool_wait",
          "upstream_connect",
          "upstream_tls",
          "network_in",
          "engine_in",
          "queue",
          "decode_wait",
          "kv_transfer",
          "prefill_cpu",
          "prefill_gpu",
          "rank_wait",
          "batch_interference",
          "first_sample",
          "network_out",
          "gateway_out",
          "gateway_to_client",
          "unattributed");

  /**
   * The {@code llm_request_attribution} column of a component: {@code kv_transfer} is {@code
   * KvTransferNs}.
   */
  public static String column(String component) {
    StringBuilder out = new StringBuilder();
    for (String word : component.split("_")) {
      out.append(Character.toUpperCase(word.charAt(0))).append(word, 1, word.length());
    }
    return out.append("Ns").toString();
  }

  /**
   * A stretch of the critical path: which component, which span explains it, when, and on which
   * engine instance ("" where the request had one; {@code a -> b} for a transfer between two).
   */
  public record Segment(String component, String span, long startNs, long endNs, String instance) {
    public Segment(String component, String span, long startNs, long endNs) {
      this(component, span, startNs, endNs, "");
    }
  }

  /**
   * A component's share on one instance of a request served by several (disaggregated
   * prefill/decode): {@code role} is {@code prefill}, {@code decode} or {@code transfer}; empty for
   * single-instance requests.
   */
  public record InstancePart(String component, String instance, String role, long ns) {}

  /**
   * A late rank the request's steps waited for: {@code rank} ({@code rank 1}, by device within the
   * step), where it ran ({@code device 1, pid 4711}), the wait charged to it and over how many
   * steps.
   */
  public record RankWait(String rank, String device, long waitNs, int steps) {}

  /**
   * One inter-token gap as the client saw it: between tokens {@code index-1} and {@code index};
   * cause when it stands out. {@code backpressureNs} is the part of it token {@code index} waited,
   * produced, for the gateway to be able to write to its client (a client reading slowly; 0 where
   * the gateway recorded no such block); the rest is the engine's.
   */
  public record Gap(int index, long startNs, long gapNs, String cause, long backpressureNs) {
    /** A gap the gateway did not hold up. */
    public Gap(int index, long startNs, long gapNs, String cause) {
      this(index, startNs, gapNs, cause, 0);
    }
  }

  public Attribution {
    components = new LinkedHashMap<>(components);
    long sum = components.values().stream().mapToLong(Long::longValue).sum();
    if (sum != ttftNs) {
      throw new IllegalStateException(
          "components of " + traceId + " sum to " + sum + " ns, TTFT is " + ttftNs + " ns");
    }
    queueBreakdown = queueBreakdown == null ? QueueBreakdown.NONE : queueBreakdown;
    instanceParts = instanceParts == null ? List.of() : List.copyOf(instanceParts);
    rankWaits = rankWaits == null ? List.of() : List.copyOf(rankWaits);
    upstream = upstream == null ? UpstreamConnection.UNKNOWN : upstream;
    tenant = tenant == null ? "" : tenant;
    tenantCauses = tenantCauses == null ? List.of() : List.copyOf(tenantCauses);
    long waited = rankWaits.stream().mapToLong(RankWait::waitNs).sum();
    if (!rankWaits.isEmpty() && waited != components.getOrDefault("rank_wait", 0L)) {
      throw new IllegalStateException(
          "rank waits of "
              + traceId
              + " sum to "
              + waited
              + " ns, rank_wait is "
              + components.getOrDefault("rank_wait", 0L)
              + " ns");
    }
    long queue = components.getOrDefault("queue", 0L);
    if (!queueBreakdown.parts().isEmpty() && queueBreakdown.totalNs() != queue) {
      throw new IllegalStateException(
          "queue breakdown of "
              + traceId
              + " sums to "
              + queueBreakdown.totalNs()
              + " ns, queue is "
              + queue
              + " ns");
    }
  }

  /**
   * Time of this request's queue and batch interference that requests of {@code tenant} caused:
   * their prefill it queued behind, their share of the batches it ran in.
   */
  public record TenantShare(String tenant, long ns) {}

  /** Without tenants. */
  public Attribution(
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
      QueueBreakdown queueBreakdown,
      List<InstancePart> instanceParts,
      List<RankWait> rankWaits,
      UpstreamConnection upstream) {
    this(
        traceId,
        requestId,
        model,
        service,
        engineInstance,
        engineAdapter,
        arrivalNs,
        startLayer,
        ttftNs,
        serverTtftNs,
        components,
        criticalPath,
        itl,
        corrections,
        promptTokens,
        outputTokens,
        prefillChunks,
        preemptions,
        notes,
        queueBreakdown,
        instanceParts,
        rankWaits,
        upstream,
        "",
        List.of());
  }

  /** Without a gateway connection seen. */
  public Attribution(
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
      QueueBreakdown queueBreakdown,
      List<InstancePart> instanceParts,
      List<RankWait> rankWaits) {
    this(
        traceId,
        requestId,
        model,
        service,
        engineInstance,
        engineAdapter,
        arrivalNs,
        startLayer,
        ttftNs,
        serverTtftNs,
        components,
        criticalPath,
        itl,
        corrections,
        promptTokens,
        outputTokens,
        prefillChunks,
        preemptions,
        notes,
        queueBreakdown,
        instanceParts,
        rankWaits,
        UpstreamConnection.UNKNOWN);
  }

  /** Without late ranks (one rank per step). */
  public Attribution(
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
      QueueBreakdown queueBreakdown,
      List<InstancePart> instanceParts) {
    this(
        traceId,
        requestId,
        model,
        service,
        engineInstance,
        engineAdapter,
        arrivalNs,
        startLayer,
        ttftNs,
        serverTtftNs,
        components,
        criticalPath,
        itl,
        corrections,
        promptTokens,
        outputTokens,
        prefillChunks,
        preemptions,
        notes,
        queueBreakdown,
        instanceParts,
        List.of());
  }

  /** A request one instance served. */
  public Attribution(
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
    this(
        traceId,
        requestId,
        model,
        service,
        engineInstance,
        engineAdapter,
        arrivalNs,
        startLayer,
        ttftNs,
        serverTtftNs,
        components,
        criticalPath,
        itl,
        corrections,
        promptTokens,
        outputTokens,
        prefillChunks,
        preemptions,
        notes,
        queueBreakdown,
        List.of(),
        List.of());
  }

  /** Without a queue breakdown (attributions built by hand). */
  public Attribution(
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
      List<String> notes) {
    this(
        traceId,
        requestId,
        model,
        service,
        engineInstance,
        engineAdapter,
        arrivalNs,
        startLayer,
        ttftNs,
        serverTtftNs,
        components,
        criticalPath,
        itl,
        corrections,
        promptTokens,
        outputTokens,
        prefillChunks,
        preemptions,
        notes,
        QueueBreakdown.NONE);
  }

  public long component(String name) {
    return components.getOrDefault(name, 0L);
  }

  /** Whether several engine instances served it (prefill and decode). */
  public boolean disaggregated() {
    return !instanceParts.isEmpty();
  }

  /**
   * The instances a component ran on, with their roles ({@code "decode pid 841"}), in waterfall
   * order; empty for one instance.
   */
  public List<InstancePart> instancesOf(String component) {
    return instanceParts.stream()
        .filter(p -> p.component().equals(component) && p.ns() != 0)
        .toList();
  }

  public long[] gapsNs() {
    return itl.stream().mapToLong(Gap::gapNs).toArray();
  }
}
