package dev.llmlat.retention;

import java.time.Duration;

/**
 * What {@link Retention} keeps past {@code olderThan}: every span and kernel of the requests over
 * the TTFT objective, of failed requests, of the slowest {@code keepSlowest} share per model, and
 * of the sample {@code keepRate} of the rest; every attribution row. Validated once.
 *
 * @param olderThan requests that arrived this long before now are decided; younger ones are left
 *     alone
 * @param sloTtftNs TTFT objective: requests over it are kept
 * @param keepSlowest share of the slowest requests per model kept, 0..1 (0.01: the slowest 1%)
 * @param keepRate share of the other requests kept, 0..1, a deterministic sample by trace id
 */
public record RetentionPolicy(
    Duration olderThan, long sloTtftNs, double keepSlowest, double keepRate) {
  public RetentionPolicy {
    if (olderThan == null || olderThan.isNegative() || olderThan.isZero()) {
      throw new IllegalArgumentException("the retention age must be positive, got " + olderThan);
    }
    if (sloTtftNs <= 0) {
      throw new IllegalArgumentException(
          "the TTFT objective must be positive, got " + sloTtftNs + " ns");
    }
    if (!(keepSlowest >= 0 && keepSlowest <= 1)) {
      throw new IllegalArgumentException(
          "the slowest share to keep must be in 0..1 (0.01 is 1%), got " + keepSlowest);
    }
    if (!(keepRate >= 0 && keepRate <= 1)) {
      throw new IllegalArgumentException(
          "the sample rate to keep must be in 0..1, got " + keepRate);
    }
  }
}
