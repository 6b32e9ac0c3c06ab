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
 * A tensor-parallel request: its wait for a late rank is a component, and the waterfall names the
 * rank.
 */
class WaterfallRankWaitTest {
  private static final long MS = 1_000_000;

  @Test
  void theLateRankIsNamedWithItsWait() {
    Map<String, Long> c = new LinkedHashMap<>();
    c.put("queue", 5 * MS);
    c.put("prefill_cpu", 40 * MS);
    c.put("prefill_gpu", 2 * MS);
    c.put("rank_wait", 18 * MS);
    Attribution a =
        Attribution.builder()
            .traceId("0dae98f58edaf5dd3241d386a2478654")
            .requestId("r1")
            .model("m")
            .service("engine")
            .engineInstance("engine")
            .engineAdapter("scheduler-sdk")
            .ttftNs(65 * MS)
            .serverTtftNs(65 * MS)
            .components(c)
            .itl(List.of(new Attribution.Gap(1, 65 * MS, 400 * MS, "waited 380.5 ms for rank 0")))
            .promptTokens(256)
            .outputTokens(20)
            .prefillChunks(1)
            .rankWaits(
                List.of(new Attribution.RankWait("rank 0", "device 0, pid 1046", 18 * MS, 1)))
            .build();
    StringWriter text = new StringWriter();
    Waterfall.print(a, new PrintWriter(text, true));
    assertThat(text.toString().lines())
        .anyMatch(l -> l.startsWith("rank_wait") && l.contains("18.000"))
        .contains("rank_wait: waited 18.000 ms for rank 0 (device 0, pid 1046) in 1 step")
        .anyMatch(l -> l.contains("waited 380.5 ms for rank 0"));
  }
}
