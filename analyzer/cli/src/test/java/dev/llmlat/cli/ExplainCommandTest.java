package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.report.Waterfall;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What {@code explain} shows of an inter-token gap a slow-reading client caused, beside an
 * engine's.
 */
class ExplainCommandTest {
  private static final long MS = 1_000_000;
  private static final String HELD =
      "the gateway could not write to its client (the client read slowly), 35.0 ms";

  static Attribution request() {
    Map<String, Long> c = new LinkedHashMap<>();
    c.put("queue", 20 * MS);
    c.put("prefill_gpu", 80 * MS);
    List<Attribution.Gap> itl =
        List.of(
            new Attribution.Gap(1, 100 * MS, 10 * MS, ""),
            new Attribution.Gap(2, 110 * MS, 45 * MS, HELD, 35 * MS),
            new Attribution.Gap(3, 155 * MS, 60 * MS, "slow step (60.0 ms)"),
            new Attribution.Gap(4, 215 * MS, 10 * MS, ""));
    return Attribution.builder()
        .traceId("0dae98f58edaf5dd3241d386a2478654")
        .requestId("r1")
        .model("m")
        .service("engine")
        .engineInstance("engine")
        .engineAdapter("scheduler-sdk")
        .startLayer("gateway")
        .ttftNs(100 * MS)
        .serverTtftNs(100 * MS)
        .components(c)
        .itl(itl)
        .promptTokens(256)
        .outputTokens(5)
        .prefillChunks(1)
        .build();
  }

  @Test
  void everyGapShowsItsBackpressureAndTheHeldOneNamesTheGateway() {
    ObjectNode json = ExplainCommand.json(request());
    JsonNode itl = json.get("itl");
    assertThat(itl).hasSize(4);
    assertThat(itl.findValues("backpressure_ns"))
        .extracting(JsonNode::asLong)
        .containsExactly(0L, 35 * MS, 0L, 0L);
    assertThat(itl.get(1).get("cause").asText()).isEqualTo(HELD);
    assertThat(itl.get(2).get("cause").asText()).isEqualTo("slow step (60.0 ms)");
    assertThat(itl.get(0).has("cause")).isFalse();
  }

  @Test
  void theTextNamesBothCauses() {
    StringWriter text = new StringWriter();
    Waterfall.print(request(), new PrintWriter(text, true));
    assertThat(text.toString().lines())
        .anyMatch(l -> l.contains("token 2") && l.contains("45.000 ms") && l.endsWith(HELD))
        .anyMatch(l -> l.contains("token 3") && l.endsWith("slow step (60.0 ms)"));
  }
}
