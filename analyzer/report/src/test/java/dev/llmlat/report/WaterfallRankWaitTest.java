package dev.llmlat.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.QueueBreakdown;
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
        new Attribution(
            "0dae98f58edaf5dd3241d386a2478654",
            "r1",
            "m",
            "engine",
            "engine",
            "scheduler-sdk",
            0,
            "engine",
            65 * MS,
            65 * MS,
            c,
            List.of(),
            List.of(new Attribution.Gap(1, 65 * MS, 400 * MS, "waited 380.5 ms for rank 0")),
            List.of(),
            256,
            20,
            1,
            0,
            List.of(),
            QueueBreakdown.NONE,
            List.of(),
            List.of(new Attribution.RankWait("rank 0", "device 0, pid 1046", 18 * MS, 1)));
    StringWriter text = new StringWriter();
    Waterfall.print(a, new PrintWriter(text, true));
    assertThat(text.toString().lines())
        .anyMatch(l -> l.startsWith("rank_wait") && l.contains("18.000"))
        .contains("rank_wait: waited 18.000 ms for rank 0 (device 0, pid 1046) in 1 step")
        .anyMatch(l -> l.contains("waited 380.5 ms for rank 0"));
  }
}
