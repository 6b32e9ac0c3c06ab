package dev.llmlat.engine;

import java.util.Locale;

/** Where the engine's spans go. */
public enum ExporterKind {
  /** OTLP protobuf records to Kafka, one per trace (the llmlat topic contract). */
  KAFKA,
  /** One log line per span (java.util.logging), for trying the engine without a broker. */
  LOGGING,
  /** Spans are dropped. */
  NONE;

  public static ExporterKind parse(String value) {
    try {
      return valueOf(value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "unknown exporter '" + value + "' (kafka|logging|none)", e);
    }
  }
}
