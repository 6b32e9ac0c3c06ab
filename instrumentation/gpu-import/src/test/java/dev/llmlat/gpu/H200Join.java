package dev.llmlat.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The H200 captures' ground truth: requests.jsonl (arrival times) and cuda_events.jsonl (step
 * order).
 */
final class H200Join {
  private H200Join() {}

  static void assertJoin(List<Span> spans, Path requestsFile, ImportReport report)
      throws Exception {
    List<JsonNode> requests = ImportFixtures.lines(requestsFile);
    List<JsonNode> events = ImportFixtures.lines(requestsFile.resolveSibling("cuda_events.jsonl"));
    List<Span> steps = new ArrayList<>();
    for (Span s : spans) {
      if (s.getName().equals("step")) {
        steps.add(s);
      }
    }
    steps.sort(Comparator.comparingLong(Span::getStartTimeUnixNano));
    assertThat(steps).hasSize(events.size());
    assertThat(report.requestsMatched()).isEqualTo(requests.size());

    // The order of steps matches the engine's own step log, kind and requests served.
    for (int i = 0; i < steps.size(); i++) {
      Span step = steps.get(i);
      JsonNode ev = events.get(i);
      List<String> served = new ArrayList<>();
      ev.get("trace_ids").forEach(t -> served.add(t.asText()));
      assertThat(ImportFixtures.attr(step, LlmlatAttributes.STEP_KIND))
          .isEqualTo(ev.get("kind").asText());
      assertThat(ImportFixtures.attr(step, LlmlatAttributes.TRACE_IDS))
          .isEqualTo(String.join(",", served));
      assertThat(step.getLinksList())
          .extracting(l -> HexFormat.of().formatHex(l.getTraceId().toByteArray()))
          .containsExactlyElementsOf(served);
      assertThat(HexFormat.of().formatHex(step.getTraceId().toByteArray()))
          .isEqualTo(served.get(0));
    }

    // Every request's first GPU step begins after it arrived; steps per request match the log.
    Map<String, List<Span>> perRequest = new HashMap<>();
    for (Span step : steps) {
      step.getLinksList()
          .forEach(
              l ->
                  perRequest
                      .computeIfAbsent(
                          HexFormat.of().formatHex(l.getTraceId().toByteArray()),
                          k -> new ArrayList<>())
                      .add(step));
    }
    List<String> byFirstStep = new ArrayList<>();
    for (JsonNode r : requests) {
      String id = r.get("trace_id").asText();
      long arrival = r.get("arrival_ns").asLong();
      List<Span> mine = perRequest.get(id);
      long expected =
          events.stream().filter(e -> e.get("trace_ids").toString().contains(id)).count();
      assertThat(mine).as("steps of %s", id).hasSize((int) expected);
      assertThat(mine.get(0).getStartTimeUnixNano())
          .as("first step of %s after arrival", id)
          .isGreaterThan(arrival);
      assertThat(ImportFixtures.attr(mine.get(0), LlmlatAttributes.STEP_KIND)).isEqualTo("prefill");
      byFirstStep.add(id);
    }
    byFirstStep.sort(
        Comparator.comparingLong(id -> perRequest.get(id).get(0).getStartTimeUnixNano()));
    List<String> byArrival = new ArrayList<>();
    requests.stream()
        .sorted(Comparator.comparingLong(r -> r.get("arrival_ns").asLong()))
        .forEach(r -> byArrival.add(r.get("trace_id").asText()));
    assertThat(byFirstStep).containsExactlyElementsOf(byArrival);
  }
}
