package dev.llmlat.semconv;

import java.util.HexFormat;

/**
 * The Kafka topic contract (schemas/kafka/README.md), written once for every producer (agent
 * extension, scheduler SDK set-up, importers, eBPF bridge) and consumer (ingester): the span topic
 * carries OTLP {@code ExportTraceServiceRequest} protobuf values, one trace per record, keyed by
 * the trace id in 32 lowercase hex digits, exactly as the Collector's kafka exporter writes them
 * with {@code encoding: otlp_proto} and {@code partition_traces_by_id: true}.
 */
public final class LlmlatTopics {
  private static final HexFormat HEX = HexFormat.of();

  /** The span topic's default name. */
  public static final String SPANS = "otlp_spans";

  /** The span topic's dead letters by default: records the ingester could not decode. */
  public static final String DEAD_LETTERS = deadLetterTopic(SPANS);

  /** Dead-letter headers: why, and where the record came from. */
  public static final String HEADER_REASON = "llmlat.dlq.reason";

  public static final String HEADER_TOPIC = "llmlat.dlq.topic";
  public static final String HEADER_PARTITION = "llmlat.dlq.partition";
  public static final String HEADER_OFFSET = "llmlat.dlq.offset";

  private LlmlatTopics() {}

  /** The dead-letter topic of a span topic: its name plus {@code _dlq}. */
  public static String deadLetterTopic(String spansTopic) {
    return spansTopic + "_dlq";
  }

  /** A span record's key: its trace id (16 bytes) as 32 lowercase hex digits. */
  public static String recordKey(byte[] traceId) {
    if (traceId.length != 16) {
      throw new IllegalArgumentException("a trace id has 16 bytes, not " + traceId.length);
    }
    return HEX.formatHex(traceId);
  }
}
