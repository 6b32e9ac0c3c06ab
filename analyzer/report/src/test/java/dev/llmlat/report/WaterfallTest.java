package dev.llmlat.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.attribution.Attribution;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WaterfallTest {
  private static Attribution startingAt(String layer, long ttftNs, long serverTtftNs) {
    return Attribution.builder()
        .traceId("4bf92f3577b34da6a3ce929d0e0e4736")
        .requestId("r1")
        .model("m")
        .service("engine")
        .engineInstance("host")
        .engineAdapter("vllm")
        .startLayer(layer)
        .ttftNs(ttftNs)
        .serverTtftNs(serverTtftNs)
        .components(Map.of("queue", ttftNs))
        .promptTokens(10)
        .outputTokens(2)
        .prefillChunks(1)
        .build();
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
