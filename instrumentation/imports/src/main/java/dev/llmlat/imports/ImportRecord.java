package dev.llmlat.imports;

import java.time.Instant;

/**
 * What a ledger knows of one import: {@link Status#PENDING} from just before its rows reach the
 * real tables until both tables have them, then {@link Status#DONE} with its counts; or, in the
 * store's ledger, {@link Status#INGESTED} for a file imported to Kafka whose rows the ingester
 * stores (from its first batch on, without counts: its records may still be arriving).
 *
 * @param spans spans stored (for a store import: rows in {@code otel_traces}; through Kafka: every
 *     span published)
 * @param kernels rows in {@code gpu_kernels} (0 through Kafka, where the ingester splits them off)
 */
public record ImportRecord(ImportedFile file, Status status, long spans, long kernels, Instant at) {
  public enum Status {
    PENDING,
    DONE,
    INGESTED;

    public String text() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static Status ofText(String text) {
      return valueOf(text.toUpperCase(java.util.Locale.ROOT));
    }
  }

  /** Stored (or being stored, through Kafka): importing the file again would make a second copy. */
  public boolean done() {
    return status == Status.DONE || status == Status.INGESTED;
  }

  /** Imported to Kafka and stored by the ingester. */
  public boolean ingested() {
    return status == Status.INGESTED;
  }
}
