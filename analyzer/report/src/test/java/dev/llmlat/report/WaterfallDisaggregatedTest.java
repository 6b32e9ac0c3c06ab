package dev.llmlat.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.attribution.Attribution;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * explain's text of a request two instances served: each component and each stretch of the path
 * names its instance.
 */
class WaterfallDisaggregatedTest {
  private static final long MS = 1_000_000;

  @Test
  void everyComponentNamesItsInstance() {
    Map<String, Long> c = new LinkedHashMap<>();
    c.put("queue", 3 * MS);
    c.put("decode_wait", 120 * MS);
    c.put("kv_transfer", MS);
    c.put("prefill_gpu", 76 * MS);
    List<Attribution.Segment> path =
        List.of(
            new Attribution.Segment("queue", "queue", 0, MS, "prefill-0"),
            new Attribution.Segment("step", "gpu step", MS, 51 * MS, "prefill-0"),
            new Attribution.Segment(
                "decode_wait", "decode instance not receiving", 51 * MS, 171 * MS, "decode-0"),
            new Attribution.Segment(
                "kv_transfer",
                "send and receive kernels overlapping",
                171 * MS,
                172 * MS,
                "prefill-0 -> decode-0"),
            new Attribution.Segment("queue", "queue", 172 * MS, 174 * MS, "decode-0"),
            new Attribution.Segment("step", "gpu step", 174 * MS, 200 * MS, "decode-0"));
    List<Attribution.InstancePart> parts =
        List.of(
            new Attribution.InstancePart("queue", "prefill-0", "prefill", MS),
            new Attribution.InstancePart("queue", "decode-0", "decode", 2 * MS),
            new Attribution.InstancePart("decode_wait", "decode-0", "decode", 120 * MS),
            new Attribution.InstancePart("kv_transfer", "prefill-0 -> decode-0", "transfer", MS),
            new Attribution.InstancePart("prefill_gpu", "prefill-0", "prefill", 50 * MS),
            new Attribution.InstancePart("prefill_gpu", "decode-0", "decode", 26 * MS));
    Attribution a =
        Attribution.builder()
            .traceId("4bf92f3577b34da6a3ce929d0e0e4736")
            .requestId("r1")
            .model("m")
            .service("engine")
            .engineInstance("decode-0")
            .engineAdapter("llmlat scheduler SDK")
            .ttftNs(200 * MS)
            .serverTtftNs(200 * MS)
            .components(c)
            .criticalPath(path)
            .promptTokens(10)
            .outputTokens(2)
            .prefillChunks(1)
            .notes(
                List.of(
                    "disaggregated (kv_send/kv_recv): prefill on prefill-0, decode on decode-0"))
            .instanceParts(parts)
            .build();
    StringWriter out = new StringWriter();
    Waterfall.print(a, new PrintWriter(out, true));
    String text = out.toString();
    assertThat(text).contains("disaggregated: prefill on prefill-0, decode on decode-0");
    assertThat(text.lines().filter(l -> l.startsWith("decode_wait")).toList())
        .anyMatch(l -> l.endsWith("[decode-0]"))
        .anyMatch(l -> l.endsWith("decode decode-0"));
    assertThat(text.lines().filter(l -> l.startsWith("kv_transfer")).toList())
        .anyMatch(l -> l.endsWith("transfer prefill-0 -> decode-0"));
    assertThat(text.lines().filter(l -> l.startsWith("queue ")).toList())
        .anyMatch(l -> l.endsWith("prefill prefill-0 1.000, decode decode-0 2.000"));
  }
}
