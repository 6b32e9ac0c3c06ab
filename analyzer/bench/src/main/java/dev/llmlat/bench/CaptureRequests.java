package dev.llmlat.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatSpanNames;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The engine's side of a capture in ../shared/traces (requests.jsonl beside the export, and the
 * per-rank cudaEvent logs cuda_events.rank*.jsonl when there are any): per request an engine
 * request span with its first-token event and a decode span whose token gaps end at the decode
 * steps' ends on the latest rank. {@link #spans} gives them for a time copy of the export made by
 * {@link TensorParallelExport}: trace ids renamed and times shifted as the copy's are.
 */
final class CaptureRequests {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * One request of the capture: its times (Unix ns) and the ends of the decode steps it was in, in
   * order.
   */
  record Request(
      String traceId,
      String parentSpanId,
      long arrivalNs,
      long firstTokenNs,
      long finishNs,
      long[] decodeEnds) {}

  private final List<Request> requests;

  private CaptureRequests(List<Request> requests) {
    this.requests = requests;
  }

  /** Reads the requests of the capture whose export is {@code export}. */
  static CaptureRequests beside(Path export) {
    Path dir = export.toAbsolutePath().getParent();
    Path file = dir.resolve("requests.jsonl");
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException(
          file
              + ": no such file (the engine's requests of "
              + export.getFileName()
              + ": trace_id, parent_span_id, arrival_ns, first_token_ns, finish_ns per line)");
    }
    try {
      Map<String, List<long[]>> decodes =
          new HashMap<>(); // trace id -> (step, end on the latest rank)
      Map<Long, long[]> stepEnds = new HashMap<>();
      Map<Long, List<String>> stepTraces = new HashMap<>();
      try (var logs = Files.newDirectoryStream(dir, "cuda_events.rank*.jsonl")) {
        for (Path log : logs) {
          for (String line : Files.readAllLines(log)) {
            if (line.isBlank()) {
              continue;
            }
            JsonNode s = JSON.readTree(line);
            if (!"decode".equals(s.path("kind").asText())) {
              continue;
            }
            long step = s.get("step").asLong();
            long end =
                s.get("host_submit_unix_ns").asLong()
                    + Math.round(s.get("gpu_elapsed_ms").asDouble() * 1e6);
            stepEnds.merge(step, new long[] {end}, (a, b) -> a[0] >= b[0] ? a : b);
            List<String> traces = new ArrayList<>();
            s.get("trace_ids").forEach(t -> traces.add(t.asText()));
            stepTraces.put(step, traces);
          }
        }
      }
      stepTraces.forEach(
          (step, traces) ->
              traces.forEach(
                  t ->
                      decodes
                          .computeIfAbsent(t, k -> new ArrayList<>())
                          .add(new long[] {step, stepEnds.get(step)[0]})));
      List<Request> requests = new ArrayList<>();
      for (String line : Files.readAllLines(file)) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode r = JSON.readTree(line);
        for (String field : List.of("trace_id", "arrival_ns", "first_token_ns", "finish_ns")) {
          if (!r.hasNonNull(field)) {
            throw new IllegalArgumentException(file + ": a request without " + field + ": " + line);
          }
        }
        String trace = r.get("trace_id").asText();
        long[] ends =
            decodes.getOrDefault(trace, List.of()).stream()
                .sorted((a, b) -> Long.compare(a[0], b[0]))
                .mapToLong(a -> a[1])
                .toArray();
        requests.add(
            new Request(
                trace,
                r.path("parent_span_id").asText(""),
                r.get("arrival_ns").asLong(),
                r.get("first_token_ns").asLong(),
                r.get("finish_ns").asLong(),
                ends));
      }
      if (requests.isEmpty()) {
        throw new IllegalArgumentException(file + ": no requests");
      }
      return new CaptureRequests(requests);
    } catch (IOException e) {
      throw new UncheckedIOException("reading the requests beside " + export, e);
    }
  }

  int size() {
    return requests.size();
  }

  /** The engine spans of time copy {@code k}, {@code shiftNs} later than the capture. */
  ExportTraceServiceRequest spans(int k, long shiftNs) {
    ScopeSpans.Builder scope = ScopeSpans.newBuilder();
    for (Request r : requests) {
      String trace = TensorParallelExport.traceId(r.traceId(), k);
      ByteString traceId = ByteString.copyFrom(HexFormat.of().parseHex(trace));
      ByteString requestId = ByteString.copyFrom(HexFormat.of().parseHex(trace.substring(0, 16)));
      Span.Builder request =
          Span.newBuilder()
              .setTraceId(traceId)
              .setSpanId(requestId)
              .setName(LlmlatSpanNames.REQUEST)
              .setKind(Span.SpanKind.SPAN_KIND_SERVER)
              .setStartTimeUnixNano(r.arrivalNs() + shiftNs)
              .setEndTimeUnixNano(r.finishNs() + shiftNs)
              .addEvents(
                  Span.Event.newBuilder()
                      .setName(LlmlatAttributes.EVENT_FIRST_TOKEN)
                      .setTimeUnixNano(r.firstTokenNs() + shiftNs));
      if (r.parentSpanId().length() == 16) {
        request.setParentSpanId(ByteString.copyFrom(HexFormat.of().parseHex(r.parentSpanId())));
      }
      ArrayValue.Builder deltas = ArrayValue.newBuilder();
      long previous = r.firstTokenNs();
      for (long end : r.decodeEnds()) {
        deltas.addValues(AnyValue.newBuilder().setIntValue(end - previous));
        previous = end;
      }
      Span decode =
          Span.newBuilder()
              .setTraceId(traceId)
              .setSpanId(ByteString.copyFrom(HexFormat.of().parseHex(trace.substring(16))))
              .setParentSpanId(requestId)
              .setName(LlmlatSpanNames.DECODE)
              .setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
              .setStartTimeUnixNano(r.firstTokenNs() + shiftNs)
              .setEndTimeUnixNano(r.finishNs() + shiftNs)
              .addAttributes(
                  KeyValue.newBuilder()
                      .setKey(LlmlatAttributes.DECODE_TOKEN_DELTAS_NS)
                      .setValue(AnyValue.newBuilder().setArrayValue(deltas)))
              .build();
      scope.addSpans(request).addSpans(decode);
    }
    Resource resource =
        Resource.newBuilder()
            .addAttributes(string("service.name", TensorParallelAnalyzeBenchmark.SERVICE))
            .addAttributes(string(LlmlatAttributes.LAYER, LlmlatAttributes.LAYER_ENGINE))
            .build();
    return ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(ResourceSpans.newBuilder().setResource(resource).addScopeSpans(scope))
        .build();
  }

  private static KeyValue string(String key, String value) {
    return KeyValue.newBuilder()
        .setKey(key)
        .setValue(AnyValue.newBuilder().setStringValue(value))
        .build();
  }
}
