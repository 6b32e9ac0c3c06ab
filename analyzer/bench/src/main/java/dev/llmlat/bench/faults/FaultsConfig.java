package dev.llmlat.bench.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;

/**
 * The fault run's sizes, validated once.
 *
 * @param only the scenarios to run (all of {@link FaultsBenchmark#SCENARIOS} when empty)
 * @param seed for kill points, generated spans and fuzzed records (printed, so a run can be
 *     repeated)
 * @param spans spans streamed through the ingester-kill scenario (the store outage uses a tenth)
 * @param kills SIGKILLs of the ingester during that stream
 * @param outage how long the store and the broker stay down
 * @param fuzzRecords records of random and mutated bytes
 * @param scratch where brokers, stores and logs live during the run (removed afterwards unless a
 *     fuzz failure is kept)
 */
public record FaultsConfig(
    Set<String> only,
    long seed,
    int spans,
    int kills,
    Duration outage,
    int fuzzRecords,
    Path scratch) {
  public FaultsConfig {
    only = Set.copyOf(only);
    for (String name : only) {
      if (!FaultsBenchmark.SCENARIOS.contains(name)) {
        throw new IllegalArgumentException(
            "--only: no scenario '"
                + name
                + "'; there are "
                + String.join(", ", FaultsBenchmark.SCENARIOS));
      }
    }
    if (spans < 1000) {
      throw new IllegalArgumentException("--spans must be at least 1000, got " + spans);
    }
    if (kills < 0 || kills > 1000) {
      throw new IllegalArgumentException("--kills must be 0..1000, got " + kills);
    }
    if (outage.isNegative() || outage.isZero() || outage.compareTo(Duration.ofMinutes(4)) > 0) {
      // beyond the consumer's max.poll.interval (5 min) a stalled ingester would be evicted from
      // its group
      throw new IllegalArgumentException(
          "--outage must be between 1 ms and 4 minutes, got " + outage);
    }
    if (fuzzRecords < 100) {
      throw new IllegalArgumentException("--fuzz-records must be at least 100, got " + fuzzRecords);
    }
    Objects.requireNonNull(scratch, "scratch");
  }

  public boolean runs(String scenario) {
    return only.isEmpty() || only.contains(scenario);
  }
}
