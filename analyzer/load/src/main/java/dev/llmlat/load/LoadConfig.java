package dev.llmlat.load;

import java.time.Duration;
import java.util.Objects;

/**
 * Everything a load run is configured with, validated once.
 *
 * @param target where requests go
 * @param model the {@code model} of every request
 * @param apiKey sent as a bearer token; null: none
 * @param shape how requests arrive
 * @param requests measured requests to send; 0: as many as {@code duration} allows
 * @param duration how long to send; null: until {@code requests} were sent
 * @param warmup requests sent first, neither measured nor traced
 * @param maxConcurrency most requests in flight at once (a closed loop: its clients)
 * @param timeout the most one request may take, headers to last byte
 * @param ignoreEos ask the server to generate the full {@code max_tokens} ({@code ignore_eos}, a
 *     vLLM/SGLang extension)
 * @param slo goodput's objectives
 * @param serviceName {@code service.name} of the client spans
 * @param maxLineBytes the longest server-sent event line, and event, a response may carry; longer
 *     fails the request
 * @param tenant whom the requests are sent for: the {@code x-tenant-id} header and the client
 *     spans' {@code llmlat.tenant}; null: none
 */
public record LoadConfig(
    Target target,
    String model,
    String apiKey,
    LoadShape shape,
    int requests,
    Duration duration,
    int warmup,
    int maxConcurrency,
    Duration timeout,
    boolean ignoreEos,
    Slo slo,
    String serviceName,
    long maxLineBytes,
    String tenant) {
  /** The header a tenant is sent in (the gateway extension's default). */
  public static final String TENANT_HEADER = "x-tenant-id";

  /**
   * 16 MiB: far above any completion chunk, low enough that a stream without newlines cannot
   * exhaust the heap.
   */
  public static final int DEFAULT_MAX_LINE_BYTES = 16 << 20;

  /** Below this a real chunk (a usage object, a long token) might not fit. */
  public static final int MIN_MAX_LINE_BYTES = 1 << 10;

  /** A line is one byte array: above this it would not be a bound. */
  public static final int MAX_MAX_LINE_BYTES = 1 << 30;

  public LoadConfig {
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(shape, "shape");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(slo, "slo");
    require(model != null && !model.isBlank(), "--model must not be empty");
    require(apiKey == null || !apiKey.isBlank(), "--api-key must not be empty");
    require(requests >= 0, "--requests must be at least 1, not " + requests);
    require(
        duration == null || (!duration.isNegative() && !duration.isZero()),
        "--duration must be longer than 0");
    require(requests > 0 || duration != null, "say how much load: --requests N or --duration 60s");
    require(warmup >= 0, "--warmup must be 0 or more, not " + warmup);
    require(maxConcurrency >= 1, "--max-concurrency must be at least 1, not " + maxConcurrency);
    require(!timeout.isNegative() && !timeout.isZero(), "--timeout must be longer than 0");
    require(serviceName != null && !serviceName.isBlank(), "--service must not be empty");
    require(
        tenant == null
            || (!tenant.isBlank()
                && tenant.length() <= 128
                && tenant.chars().allMatch(c -> c >= 0x20 && c < 0x7f)),
        "--tenant must be 1..128 printable ASCII characters");
    require(
        maxLineBytes >= MIN_MAX_LINE_BYTES && maxLineBytes <= MAX_MAX_LINE_BYTES,
        "--max-line must be between "
            + ByteSize.describe(MIN_MAX_LINE_BYTES)
            + " and "
            + ByteSize.describe(MAX_MAX_LINE_BYTES)
            + ", not "
            + ByteSize.describe(maxLineBytes));
    if (shape instanceof LoadShape.Closed c) {
      maxConcurrency = c.concurrency(); // the clients are the bound
    }
  }

  /**
   * This configuration with another arrival shape and warm-up (one point of a sweep); a closed
   * loop's clients bound it, an open loop keeps this one's bound.
   */
  public LoadConfig with(LoadShape shape, int warmup) {
    return new LoadConfig(
        target,
        model,
        apiKey,
        shape,
        requests,
        duration,
        warmup,
        maxConcurrency,
        timeout,
        ignoreEos,
        slo,
        serviceName,
        maxLineBytes,
        tenant);
  }

  public static Builder builder(Target target, String model) {
    return new Builder(target, model);
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }

  /**
   * Defaults: 100 requests at 1 req/s constant, no warm-up, 256 in flight at most, 5 min timeout,
   * service llmlat-load, 16 MiB lines.
   */
  public static final class Builder {
    private final Target target;
    private final String model;
    private String apiKey;
    private LoadShape shape = new LoadShape.Constant(1);
    private int requests = 100;
    private Duration duration;
    private int warmup;
    private int maxConcurrency = 256;
    private Duration timeout = Duration.ofMinutes(5);
    private boolean ignoreEos;
    private Slo slo = Slo.none();
    private String serviceName = "llmlat-load";
    private long maxLineBytes = DEFAULT_MAX_LINE_BYTES;
    private String tenant;

    private Builder(Target target, String model) {
      this.target = target;
      this.model = model;
    }

    public Builder apiKey(String key) {
      this.apiKey = key;
      return this;
    }

    public Builder shape(LoadShape shape) {
      this.shape = shape;
      return this;
    }

    /** Measured requests; 0 with a duration: as many as it allows. */
    public Builder requests(int requests) {
      this.requests = requests;
      return this;
    }

    public Builder duration(Duration duration) {
      this.duration = duration;
      return this;
    }

    public Builder warmup(int warmup) {
      this.warmup = warmup;
      return this;
    }

    public Builder maxConcurrency(int max) {
      this.maxConcurrency = max;
      return this;
    }

    public Builder timeout(Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    public Builder ignoreEos(boolean ignore) {
      this.ignoreEos = ignore;
      return this;
    }

    public Builder slo(Slo slo) {
      this.slo = slo;
      return this;
    }

    public Builder serviceName(String name) {
      this.serviceName = name;
      return this;
    }

    public Builder maxLineBytes(long bytes) {
      this.maxLineBytes = bytes;
      return this;
    }

    public Builder tenant(String tenant) {
      this.tenant = tenant;
      return this;
    }

    public LoadConfig build() {
      return new LoadConfig(
          target,
          model,
          apiKey,
          shape,
          requests,
          duration,
          warmup,
          maxConcurrency,
          timeout,
          ignoreEos,
          slo,
          serviceName,
          maxLineBytes,
          tenant);
    }
  }
}
