package dev.llmlat.ingest.imports;

import java.time.Instant;
import java.util.Locale;

/**
 * One row of the claims table ({@link ImportClaims}): from {@code epoch} on, until a higher epoch,
 * only {@code claimant} writes the rows of import {@code importId}.
 *
 * @param claimant {@code store:<run>} (one run of an import into the store) or {@code kafka:<run>}
 *     (one run of an import to Kafka: every ingester storing its records holds the claim together)
 * @param owner for a store import, the process that holds it (as {@link StagingTables.Owner} writes
 *     it), empty once its run failed part-way; empty for the Kafka path
 */
public record ImportClaim(
    String importId, long epoch, String claimant, Path path, String owner, Instant at) {
  public enum Path {
    STORE,
    KAFKA,
    RELEASED;

    String text() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Path ofText(String text) {
      return valueOf(text.toUpperCase(Locale.ROOT));
    }
  }

  public boolean heldBy(String someone) {
    return path != Path.RELEASED && claimant.equals(someone);
  }

  public boolean released() {
    return path == Path.RELEASED;
  }

  /**
   * A store import's claim whose run is over without its commit: it failed part-way (no owner any
   * more), or its process is gone (killed, crashed). It will write nothing more.
   */
  boolean abandoned(Instant now) {
    return path == Path.STORE
        && (owner.isEmpty()
            || StagingTables.Owner.parse(owner).map(o -> !o.mayBeRunning(now)).orElse(false));
  }
}
