package dev.llmlat.semconv;

/**
 * The metrics {@code llmlat analyze} and {@code llmlat attribute --live} export (OpenTelemetry,
 * over OTLP and a Prometheus scrape endpoint): their names, units and attribute keys, which users'
 * queries and dashboards name. Durations are in seconds (OpenTelemetry's convention for durations);
 * Prometheus sees the names with dots as underscores and the unit appended ({@code
 * llmlat_request_ttft_seconds}, counters with {@code _total}).
 *
 * <p>Every data point carries {@link #SERVICE}, {@link #MODEL}, {@link #ENGINE_INSTANCE} and {@link
 * LlmlatAttributes#TENANT} where the request has them (an empty value is left out). Each instrument
 * holds a bounded number of attribute sets; measurements beyond it go to the one series that
 * OpenTelemetry marks {@link #OVERFLOW}{@code =true}.
 */
public final class LlmlatMetrics {
  private LlmlatMetrics() {}

  /**
   * Histogram (exponential buckets), {@link #UNIT_SECONDS}: time to first token of each attributed
   * request.
   */
  public static final String TTFT = "llmlat.request.ttft";

  /**
   * Histogram (exponential buckets), {@link #UNIT_SECONDS}: each TTFT component of each request,
   * {@link #COMPONENT} naming it (every component, zero included, so that each component's
   * histogram counts every request and the components' sums add up to TTFT's).
   */
  public static final String TTFT_COMPONENT = "llmlat.request.ttft.component";

  /**
   * Histogram (exponential buckets), {@link #UNIT_SECONDS}: every inter-token gap of each request.
   */
  public static final String ITL = "llmlat.request.itl";

  /**
   * Counter, {@link #UNIT_REQUESTS}: requests that missed an objective, {@link #SLO_OBJECTIVE}
   * naming it.
   */
  public static final String SLO_VIOLATIONS = "llmlat.slo.violations";

  /**
   * Counter, {@link #UNIT_SECONDS}: the time requests queued, split by what the engine did
   * meanwhile ({@link #QUEUE_CAUSE}); its sum over the causes is the {@code queue} component of the
   * requests whose engine reports steps.
   */
  public static final String QUEUE_TIME = "llmlat.queue.time";

  public static final String UNIT_SECONDS = "s";
  public static final String UNIT_REQUESTS = "{request}";

  /** The request's service ({@code service.name} of its engine, else of its gateway). */
  public static final String SERVICE = "llmlat.service";

  /** The model requested (OpenTelemetry GenAI's name). */
  public static final String MODEL = "gen_ai.request.model";

  /**
   * The engine instance that served it, as {@code llm_request_attribution.EngineInstance} names it.
   */
  public static final String ENGINE_INSTANCE = "llmlat.engine.instance";

  /**
   * On {@link #TTFT_COMPONENT}: the component, one of the attribution's ({@code queue}, {@code
   * prefill_gpu} ...).
   */
  public static final String COMPONENT = "llmlat.component";

  /** On {@link #SLO_VIOLATIONS}: {@link #OBJECTIVE_TTFT} or {@link #OBJECTIVE_TPOT}. */
  public static final String SLO_OBJECTIVE = "llmlat.slo.objective";

  /** TTFT above its objective. */
  public static final String OBJECTIVE_TTFT = "ttft";

  /** The mean inter-token gap (time per output token after the first) above its objective. */
  public static final String OBJECTIVE_TPOT = "tpot";

  /**
   * On {@link #QUEUE_TIME}: {@code prefill}, {@code decode}, {@code between_steps}, {@code
   * preempted} or {@code no_steps} (the attribution's queue breakdown).
   */
  public static final String QUEUE_CAUSE = "llmlat.queue.cause";

  /**
   * OpenTelemetry's mark of the series that takes the measurements beyond an instrument's
   * cardinality limit.
   */
  public static final String OVERFLOW = "otel.metric.overflow";
}
