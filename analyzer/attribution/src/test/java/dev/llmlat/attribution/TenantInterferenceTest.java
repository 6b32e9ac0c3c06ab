package dev.llmlat.attribution;

import static dev.llmlat.attribution.Spans.MS;
import static dev.llmlat.attribution.Spans.id;
import static dev.llmlat.attribution.Spans.span;
import static dev.llmlat.attribution.Spans.trace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Who made a request wait: tenant "long" sends a 4096-token prompt, tenant "short" a 100-token one
 * that arrives with it. The truth, read off the timeline by hand: short queues 0..100 ms, 80 of it
 * behind long's prefill (10..90) and 20 between steps; its prefill step (100..150) also decodes
 * long's token, half the step's tokens, so 25 ms of it is batch interference caused by long.
 */
class TenantInterferenceTest {
  private static final String LONG = trace(31);
  private static final String SHORT = trace(32);

  private static List<SpanRecord> twoTenants(String key) {
    List<SpanRecord> s = new ArrayList<>();
    s.add(
        span(LONG, id(1), "llm_request", 0, 400)
            .kind("Server")
            .attr(key, "long")
            .event(LlmlatAttributes.EVENT_FIRST_TOKEN, 90)
            .build());
    s.add(span(LONG, id(2), "queue", 0, 10).parent(id(1)).build());
    s.add(
        span(LONG, id(3), "prefill", 10, 90)
            .parent(id(1))
            .attr(LlmlatAttributes.STEP_SPAN_ID, id(20))
            .attr(LlmlatAttributes.PREFILL_TOKENS, 4096)
            .build());
    s.add(
        span(SHORT, id(5), "llm_request", 0, 400)
            .kind("Server")
            .attr(key, "short")
            .event(LlmlatAttributes.EVENT_FIRST_TOKEN, 150)
            .build());
    s.add(span(SHORT, id(6), "queue", 0, 100).parent(id(5)).build());
    s.add(
        span(SHORT, id(7), "prefill", 100, 150)
            .parent(id(5))
            .attr(LlmlatAttributes.STEP_SPAN_ID, id(21))
            .attr(LlmlatAttributes.PREFILL_TOKENS, 100)
            .build());
    s.add(
        span(LONG, id(20), "step", 10, 90)
            .attr(LlmlatAttributes.STEP_KIND, "prefill")
            .attr(LlmlatAttributes.STEP_BATCH_SIZE, 1)
            .attr(LlmlatAttributes.STEP_PREFILL_TOKENS, 4096)
            .attr(LlmlatAttributes.TRACE_IDS, "[\"" + LONG + "\"]")
            .link(LONG)
            .build());
    s.add(
        span(SHORT, id(21), "step", 100, 150)
            .attr(LlmlatAttributes.STEP_KIND, "mixed")
            .attr(LlmlatAttributes.STEP_BATCH_SIZE, 2)
            .attr(LlmlatAttributes.STEP_PREFILL_TOKENS, 100)
            .attr(LlmlatAttributes.STEP_DECODE_TOKENS, 100)
            .attr(LlmlatAttributes.TRACE_IDS, "[\"" + SHORT + "\",\"" + LONG + "\"]")
            .link(SHORT)
            .link(LONG)
            .build());
    return s;
  }

  private static Attribution of(List<Attribution> all, String trace) {
    return all.stream().filter(a -> a.traceId().equals(trace)).findFirst().orElseThrow();
  }

  @Test
  void theLongPromptTenantIsNamedForTheShortOnesQueueAndBatchInterference() {
    List<Attribution> all = TraceAttribution.attribute(twoTenants(LlmlatAttributes.TENANT));
    Attribution shortOne = of(all, SHORT);
    assertThat(shortOne.tenant()).isEqualTo("short");
    assertThat(shortOne.component("queue")).isEqualTo(100 * MS);
    assertThat(shortOne.component("batch_interference")).isEqualTo(25 * MS);
    assertThat(shortOne.tenantCauses())
        .extracting(Attribution.TenantShare::tenant, Attribution.TenantShare::ns)
        .containsExactly(tuple("long", 105 * MS));
    Attribution longOne = of(all, LONG);
    assertThat(longOne.tenant()).isEqualTo("long");
    assertThat(longOne.tenantCauses()).isEmpty(); // it waited for nobody: 10 ms between steps
  }

  @Test
  void anyAttributeCanNameTheTenant() {
    TraceAttribution.Aligned aligned = TraceAttribution.alignClocks(twoTenants("customer.id"));
    Attribution shortOne = of(TraceAttribution.attribute(aligned, t -> true, "customer.id"), SHORT);
    assertThat(shortOne.tenant()).isEqualTo("short");
    assertThat(shortOne.tenantCauses())
        .extracting(Attribution.TenantShare::tenant)
        .containsExactly("long");
    // read with the default attribute, the same spans name no tenant
    assertThat(of(TraceAttribution.attribute(aligned, t -> true), SHORT).tenant()).isEmpty();
  }
}
