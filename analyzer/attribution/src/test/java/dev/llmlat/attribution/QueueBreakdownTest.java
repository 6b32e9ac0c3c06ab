package dev.llmlat.attribution;

import static dev.llmlat.attribution.Spans.MS;
import static dev.llmlat.attribution.Spans.id;
import static dev.llmlat.attribution.Spans.span;
import static dev.llmlat.attribution.Spans.trace;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The queue split by the scheduler SDK's steps, with the scheduler state they report. */
class QueueBreakdownTest {
  static final String A = trace(1);
  static final String B = trace(2);

  /**
   * A request's llm_request span with its queue, one prefill chunk in step {@code step}, and its
   * first token.
   */
  static void request(
      List<SpanRecord> s,
      String t,
      int n,
      double queueEnd,
      double prefillEnd,
      String step,
      long tokens) {
    s.add(
        span(t, id(n), "llm_request", 0, prefillEnd + 100)
            .kind("Server")
            .event("llmlat.first_token", prefillEnd)
            .build());
    s.add(span(t, id(n + 1), "queue", 0, queueEnd).parent(id(n)).build());
    s.add(
        span(t, id(n + 2), "prefill", queueEnd, prefillEnd)
            .parent(id(n))
            .attr("llmlat.step.span_id", step)
            .attr("llmlat.prefill.tokens", tokens)
            .build());
  }

  static Spans.B step(
      String t, String stepId, double start, double end, String kind, String served) {
    return span(t, stepId, "step", start, end)
        .attr("llmlat.step.kind", kind)
        .attr("llmlat.step.batch_size", 1)
        .attr("llmlat.trace_ids", "[\"" + served + "\"]")
        .link(served);
  }

  @Test
  void theQueueIsSplitByTheOtherRequestsStepsAndTheKvCacheIsNamed() {
    List<SpanRecord> s = new ArrayList<>();
    request(s, B, 10, 10, 90, id(20), 4096);
    request(s, A, 30, 200, 300, id(40), 100);
    s.add(
        step(B, id(20), 10, 90, "prefill", B)
            .attr("llmlat.step.prefill_tokens", 4096)
            .attr("llmlat.scheduler.running", 1)
            .attr("llmlat.scheduler.waiting", 1)
            .attr("llmlat.scheduler.kv_blocks.used", 97)
            .attr("llmlat.scheduler.kv_blocks.total", 100)
            .build());
    s.add(
        step(B, id(21), 100, 180, "decode", B)
            .attr("llmlat.step.decode_tokens", 1)
            .attr("llmlat.scheduler.kv_blocks.used", 97)
            .attr("llmlat.scheduler.kv_blocks.total", 100)
            .build());
    s.add(step(A, id(40), 200, 300, "prefill", A).attr("llmlat.step.prefill_tokens", 100).build());
    Attribution a =
        TraceAttribution.attribute(s).stream()
            .filter(x -> x.traceId().equals(A))
            .findFirst()
            .orElseThrow();
    QueueBreakdown q = a.queueBreakdown();
    assertThat(a.component("queue")).isEqualTo(200 * MS);
    assertThat(q.totalNs()).isEqualTo(a.component("queue"));
    assertThat(q.parts())
        .extracting(QueueBreakdown.Part::kind, QueueBreakdown.Part::ns)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("prefill", 80 * MS),
            org.assertj.core.groups.Tuple.tuple("decode", 80 * MS),
            org.assertj.core.groups.Tuple.tuple("between_steps", 40 * MS));
    assertThat(q.longestBlocker().cause())
        .isEqualTo("behind prefill of request " + B + " (4096 tokens)");
    assertThat(q.parts().get(1).batch()).isEqualTo(1);
    assertThat(q.limit()).isEqualTo("KV cache 97% full");
  }

  @Test
  void aBatchAtMaxNumSeqsAndAFullTokenBudgetAreNamed() {
    SchedulerState seqs = new SchedulerState(256, 10, 10, 100, 8192, 256, 300);
    assertThat(seqs.describe(seqs.binding())).isEqualTo("batch at max_num_seqs 256");
    SchedulerState budget = new SchedulerState(12, 3, 10, 100, 8192, 256, 8192);
    assertThat(budget.describe(budget.binding())).isEqualTo("token budget 8192 reached");
    assertThat(SchedulerState.UNKNOWN.binding()).isEmpty();
  }

  @Test
  void waitingAfterAPreemptionIsWaitingToResume() {
    List<SpanRecord> s = new ArrayList<>();
    s.add(
        span(A, id(30), "llm_request", 0, 400)
            .kind("Server")
            .event("llmlat.first_token", 200)
            .event("llmlat.preempted", 100)
            .build());
    s.add(span(A, id(31), "queue", 0, 50).parent(id(30)).build());
    s.add(
        span(A, id(32), "prefill", 50, 100)
            .parent(id(30))
            .attr("llmlat.step.span_id", id(40))
            .build());
    s.add(
        span(A, id(33), "queue", 100, 150)
            .parent(id(30))
            .attr("llmlat.queue.requeued", true)
            .build());
    s.add(
        span(A, id(34), "prefill", 150, 200)
            .parent(id(30))
            .attr("llmlat.step.span_id", id(41))
            .build());
    s.add(step(A, id(40), 50, 100, "prefill", A).build());
    s.add(step(A, id(41), 150, 200, "prefill", A).build());
    QueueBreakdown q = TraceAttribution.attribute(s).get(0).queueBreakdown();
    assertThat(q.ns(QueueBreakdown.BETWEEN_STEPS)).isEqualTo(50 * MS);
    assertThat(q.ns(QueueBreakdown.PREEMPTED)).isEqualTo(50 * MS);
  }

  @Test
  void anEngineThatShowsNoStepsCannotSayWhy() {
    List<SpanRecord> s = new ArrayList<>();
    s.add(
        span(A, id(30), "llm_request", 0, 400)
            .kind("Server")
            .event("llmlat.first_token", 200)
            .build());
    s.add(span(A, id(31), "queue", 0, 120).parent(id(30)).build());
    QueueBreakdown q = TraceAttribution.attribute(s).get(0).queueBreakdown();
    assertThat(q.parts())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.cause()).isEqualTo("cannot show why: the engine shows no steps");
              assertThat(p.ns()).isEqualTo(120 * MS);
            });
  }

  @Test
  void sharesSplitExactly() {
    long[] parts = QueueAnalyzer.split(1001, new long[] {1, 1, 1});
    assertThat(parts[0] + parts[1] + parts[2]).isEqualTo(1001);
  }
}
