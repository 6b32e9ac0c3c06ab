package dev.llmlat.report;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.semconv.LlmlatSpanNames;
import java.io.IOException;
import java.io.OutputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes aligned spans as Chrome trace-event JSON, which ui.perfetto.dev and chrome://tracing open:
 * one process per layer (gateway, engine, GPU, eBPF), one thread per kind of span, span events as
 * instants, and, for one request, its TTFT attribution as a track of its own.
 */
public final class PerfettoExport {
  private static final List<String> LAYERS = List.of("gateway", "engine", "gpu", "ebpf", "other");
  private static final int ATTRIBUTION_PID = 10;

  private PerfettoExport() {}

  public static void write(List<SpanRecord> spans, Attribution attribution, OutputStream out)
      throws IOException {
    try (JsonGenerator g = new JsonFactory().createGenerator(out, JsonEncoding.UTF8)) {
      g.writeStartObject();
      g.writeStringField("displayTimeUnit", "ns");
      g.writeArrayFieldStart("traceEvents");
      Map<String, Integer> threads = new LinkedHashMap<>();
      for (int i = 0; i < LAYERS.size(); i++) {
        meta(g, "process_name", i + 1, 0, LAYERS.get(i));
        meta(g, "process_sort_index", i + 1, 0, Integer.toString(i));
      }
      for (SpanRecord s : spans) {
        int pid = pid(s.layer());
        String lane = lane(s);
        int tid =
            threads.computeIfAbsent(
                pid + "/" + lane,
                k -> {
                  int id = threads.size() + 1;
                  try {
                    meta(g, "thread_name", pid, id, lane);
                  } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                  }
                  return id;
                });
        g.writeStartObject();
        g.writeStringField("name", s.name());
        g.writeStringField("cat", s.layer().isEmpty() ? "other" : s.layer());
        g.writeStringField("ph", "X");
        g.writeNumberField("ts", s.startNs() / 1000.0);
        g.writeNumberField("dur", Math.max(0, s.durationNs()) / 1000.0);
        g.writeNumberField("pid", pid);
        g.writeNumberField("tid", tid);
        g.writeObjectFieldStart("args");
        g.writeStringField("trace_id", s.traceId());
        g.writeStringField("span_id", s.spanId());
        g.writeStringField("service", s.service());
        for (Map.Entry<String, String> a : new TreeMap<>(s.attributes()).entrySet()) {
          g.writeStringField(a.getKey(), a.getValue());
        }
        g.writeEndObject();
        g.writeEndObject();
        for (SpanRecord.Event e : s.events()) {
          g.writeStartObject();
          g.writeStringField("name", e.name());
          g.writeStringField("ph", "i");
          g.writeStringField("s", "t");
          g.writeNumberField("ts", e.timeNs() / 1000.0);
          g.writeNumberField("pid", pid);
          g.writeNumberField("tid", tid);
          g.writeEndObject();
        }
      }
      if (attribution != null) {
        meta(g, "process_name", ATTRIBUTION_PID, 0, "TTFT attribution " + attribution.traceId());
        meta(g, "thread_name", ATTRIBUTION_PID, 1, "critical path");
        for (Attribution.Segment seg : attribution.criticalPath()) {
          g.writeStartObject();
          g.writeStringField("name", seg.component());
          g.writeStringField("cat", "attribution");
          g.writeStringField("ph", "X");
          g.writeNumberField("ts", seg.startNs() / 1000.0);
          g.writeNumberField("dur", (seg.endNs() - seg.startNs()) / 1000.0);
          g.writeNumberField("pid", ATTRIBUTION_PID);
          g.writeNumberField("tid", 1);
          g.writeObjectFieldStart("args");
          g.writeStringField("span", seg.span());
          g.writeEndObject();
          g.writeEndObject();
        }
      }
      g.writeEndArray();
      g.writeEndObject();
    }
  }

  private static int pid(String layer) {
    int i = LAYERS.indexOf(layer);
    return (i < 0 ? LAYERS.size() - 1 : i) + 1;
  }

  /** Spans of one kind share a thread; steps get their own so they never overlap request spans. */
  private static String lane(SpanRecord s) {
    return switch (s.name()) {
      case LlmlatSpanNames.REQUEST, "queue", "prefill", "decode" -> s.name();
      case "step" -> "steps";
      default -> s.kind().isEmpty() ? s.name() : s.kind();
    };
  }

  private static void meta(JsonGenerator g, String name, int pid, int tid, String value)
      throws IOException {
    g.writeStartObject();
    g.writeStringField("name", name);
    g.writeStringField("ph", "M");
    g.writeNumberField("pid", pid);
    g.writeNumberField("tid", tid);
    g.writeObjectFieldStart("args");
    if (name.endsWith("sort_index")) {
      g.writeNumberField("sort_index", Integer.parseInt(value));
    } else {
      g.writeStringField("name", value);
    }
    g.writeEndObject();
    g.writeEndObject();
  }
}
