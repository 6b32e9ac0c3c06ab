package dev.llmlat.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.attribution.Attribution;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WaterfallTest {
  private static Attribution startingAt(String layer, long ttftNs, long serverTtftNs) {
    return new Attribution(
        "4bf92f3577b34da6a3ce929d0e0e4736",
        "r1",
        "m",
        "engine",
        "host",
        "vllm",
        0,
        layer,
        ttftNs,
        serverTtftNs,
        Map.of("queue", ttftNs),
        List.of(),
        List.of(),
        List.of(),
        10,
        2,
        1,
        0,
        List.of());
  }

  private static String header(Attribution a) {
    StringWriter text = new StringWriter();
    Waterfall.print(a, new PrintWriter(text, true));
    return text.toString().lines().findFirst().orElseThrow();
  }

  @Test
  void theHeaderSaysWhereTtftStarts() {
    assertThat(header(startingAt("client", 150_000_000, 120_000_000)))
        .contains("TTFT 150.000 ms")
        .contains("client's request to its first content chunk")
        .contains("server's own 120.000 ms")
        .doesNotContain("engine");
    assertThat(header(startingAt("gateway", 120_000_000, 120_000_000)))
        .contains("gateway's server span");
    assertThat(header(startingAt("engine", 90_000_000, 90_000_000)))
        .contains("engine's arrival to the first token");
  }
}
