package dev.llmlat.cli.collector;

import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The records the Collector's kafka exporter produces for one batch with {@code encoding:
 * otlp_proto} and {@code partition_traces_by_id: true}, rebuilt from its source
 * (opentelemetry-collector-contrib, exporter/kafkaexporter/kafka_exporter.go {@code
 * kafkaTracesMessenger.partitionData}, pkg/batchpersignal/batchpersignal.go {@code SplitTraces},
 * internal/coreinternal/traceutil {@code TraceIDToHexOrEmptyString}):
 *
 * <ul>
 *   <li>one record per trace <em>per resource and scope</em>: the same trace under two scopes
 *       becomes two records with the same key;
 *   <li>value: pdata's ProtoMarshaler output, an {@code ExportTraceServiceRequest} with one
 *       ResourceSpans (resource and schema URL copied) holding one ScopeSpans (scope and schema URL
 *       copied) with the trace's spans in their original order;
 *   <li>key: the trace id as 32 lowercase hex characters;
 *   <li>headers: none, unless {@code include_metadata_keys}, {@code record_headers} or {@code
 *       signal_header} is configured (internal/kafkaclient/headers.go).
 * </ul>
 *
 * Go's and Java's protobuf encoders both write fields in field-number order and skip defaults, so
 * these bytes equal the Collector's.
 */
final class CollectorKafkaExporter {
  private CollectorKafkaExporter() {}

  record Record(String key, byte[] value) {}

  static List<Record> records(ExportTraceServiceRequest batch) {
    List<Record> records = new ArrayList<>();
    for (ResourceSpans rs : batch.getResourceSpansList()) {
      for (ScopeSpans ss : rs.getScopeSpansList()) {
        Map<String, List<Span>> byTrace = new LinkedHashMap<>();
        for (Span span : ss.getSpansList()) {
          byTrace
              .computeIfAbsent(
                  HexFormat.of().formatHex(span.getTraceId().toByteArray()), k -> new ArrayList<>())
              .add(span);
        }
        byTrace.forEach(
            (traceId, spans) ->
                records.add(
                    new Record(
                        traceId,
                        ExportTraceServiceRequest.newBuilder()
                            .addResourceSpans(
                                ResourceSpans.newBuilder()
                                    .setResource(rs.getResource())
                                    .setSchemaUrl(rs.getSchemaUrl())
                                    .addScopeSpans(
                                        ScopeSpans.newBuilder()
                                            .setScope(ss.getScope())
                                            .setSchemaUrl(ss.getSchemaUrl())
                                            .addAllSpans(spans)))
                            .build()
                            .toByteArray())));
      }
    }
    return records;
  }
}
