package dev.llmlat.attribution;

import dev.llmlat.semconv.TtftComponent;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One request's TTFT split into contiguous components ({@link TtftComponent}, by {@link
 * TtftComponent#id()}) that sum exactly to {@link #ttftNs}, its inter-token gaps with causes, the
 * clock corrections applied, and what the engine did while the request queued ({@link
 * QueueBreakdown}, its parts summing exactly to {@code queue}), and under tensor parallelism the
 * late ranks its steps waited for ({@code rankWaits}, summing exactly to {@code rank_wait}), and
 * how the gateway got its upstream connection ({@code upstream}: the pool, new or reused). {@code
 * tenant} is whom it was served for ("" when no span names one); {@code tenantCauses} is how much
 * of its queue (behind other requests' prefill) and batch interference each tenant's requests
 * caused. {@code startLayer} is where TTFT starts ({@code client}, {@code gateway} or {@code
 * engine}); {@code serverTtftNs} is the TTFT the server side alone saw (equal to {@code ttftNs}
 * unless a client layer started the trace).
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
    if (!rankWaits.isEmpty()
        && waited != components.getOrDefault(TtftComponent.RANK_WAIT.id(), 0L)) {
      throw new IllegalStateException(
          "rank waits of "
              + traceId
              + " sum to "
              + waited
              + " ns, rank_wait is "
              + components.getOrDefault(TtftComponent.RANK_WAIT.id(), 0L)
              + " ns");
    }
    long queue = components.getOrDefault(TtftComponent.QUEUE.id(), 0L);
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

  /**
   * A builder, for attributions made by hand (tests, examples): what is not set is empty, zero,
   * {@link QueueBreakdown#NONE} and {@link UpstreamConnection#UNKNOWN}.
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds an {@link Attribution}; the record's own checks run in {@link #build()}. */
  public static final class Builder {
    private String traceId = "";
    private String requestId = "";
    private String model = "";
    private String service = "";
    private String engineInstance = "";
    private String engineAdapter = "";
    private long arrivalNs = 0;
    private String startLayer = "engine";
    private long ttftNs = 0;
    private long serverTtftNs = 0;
    private Map<String, Long> components = Map.of();
    private List<Segment> criticalPath = List.of();
    private List<Gap> itl = List.of();
    private List<ClockCorrection> corrections = List.of();
    private long promptTokens = 0;
    private long outputTokens = 0;
    private int prefillChunks = 0;
    private int preemptions = 0;
    private List<String> notes = List.of();
    private QueueBreakdown queueBreakdown = QueueBreakdown.NONE;
    private List<InstancePart> instanceParts = List.of();
    private List<RankWait> rankWaits = List.of();
    private UpstreamConnection upstream = UpstreamConnection.UNKNOWN;
    private String tenant = "";
    private List<TenantShare> tenantCauses = List.of();

    private Builder() {}

    public Builder traceId(String traceId) {
      this.traceId = traceId;
      return this;
    }

    public Builder requestId(String requestId) {
      this.requestId = requestId;
      return this;
    }

    public Builder model(String model) {
      this.model = model;
      return this;
    }

    public Builder service(String service) {
      this.service = service;
      return this;
    }

    public Builder engineInstance(String engineInstance) {
      this.engineInstance = engineInstance;
      return this;
    }

    public Builder engineAdapter(String engineAdapter) {
      this.engineAdapter = engineAdapter;
      return this;
    }

    public Builder arrivalNs(long arrivalNs) {
      this.arrivalNs = arrivalNs;
      return this;
    }

    public Builder startLayer(String startLayer) {
      this.startLayer = startLayer;
      return this;
    }

    public Builder ttftNs(long ttftNs) {
      this.ttftNs = ttftNs;
      return this;
    }

    public Builder serverTtftNs(long serverTtftNs) {
      this.serverTtftNs = serverTtftNs;
      return this;
    }

    public Builder components(Map<String, Long> components) {
      this.components = components;
      return this;
    }

    public Builder criticalPath(List<Segment> criticalPath) {
      this.criticalPath = criticalPath;
      return this;
    }

    public Builder itl(List<Gap> itl) {
      this.itl = itl;
      return this;
    }

    public Builder corrections(List<ClockCorrection> corrections) {
      this.corrections = corrections;
      return this;
    }

    public Builder promptTokens(long promptTokens) {
      this.promptTokens = promptTokens;
      return this;
    }

    public Builder outputTokens(long outputTokens) {
      this.outputTokens = outputTokens;
      return this;
    }

    public Builder prefillChunks(int prefillChunks) {
      this.prefillChunks = prefillChunks;
      return this;
    }

    public Builder preemptions(int preemptions) {
      this.preemptions = preemptions;
      return this;
    }

    public Builder notes(List<String> notes) {
      this.notes = notes;
      return this;
    }

    public Builder queueBreakdown(QueueBreakdown queueBreakdown) {
      this.queueBreakdown = queueBreakdown;
      return this;
    }

    public Builder instanceParts(List<InstancePart> instanceParts) {
      this.instanceParts = instanceParts;
      return this;
    }

    public Builder rankWaits(List<RankWait> rankWaits) {
      this.rankWaits = rankWaits;
      return this;
    }

    public Builder upstream(UpstreamConnection upstream) {
      this.upstream = upstream;
      return this;
    }

    public Builder tenant(String tenant) {
      this.tenant = tenant;
      return this;
    }

    public Builder tenantCauses(List<TenantShare> tenantCauses) {
      this.tenantCauses = tenantCauses;
      return this;
    }

    public Attribution build() {
      return new Attribution(
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
          tenant,
          tenantCauses);
    }
  }

  public long component(String name) {
    return components.getOrDefault(name, 0L);
  }

  public long component(TtftComponent c) {
    return components.getOrDefault(c.id(), 0L);
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
