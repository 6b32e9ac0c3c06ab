package dev.llmlat.analyze.engines;

import dev.llmlat.analyze.SpanRecord;

/**
 * The {@code gen_ai.latency.*} attributes vLLM introduced and TensorRT-LLM copied: seconds as
 * doubles, each a difference of the engine's own timestamps, chained from the first token back:
 * scheduled = first token - time_in_model_prefill, queued = scheduled - time_in_queue. The span
 * starts at the request's arrival and {@code time_to_first_token} is measured from it.
 */
final class GenAiLatency {
  static final String TTFT = "gen_ai.latency.time_to_first_token";
  static final String QUEUE = "gen_ai.latency.time_in_queue";
  static final String PREFILL = "gen_ai.latency.time_in_model_prefill";
  static final String DECODE = "gen_ai.latency.time_in_model_decode";
  static final String INFERENCE = "gen_ai.latency.time_in_model_inference";
  static final String E2E = "gen_ai.latency.e2e";

  private GenAiLatency() {}

  /** Whether the span carries any of the latency attributes. */
  static boolean present(SpanRecord s) {
    return s.attributes().containsKey(TTFT) || s.attributes().containsKey(E2E);
  }

  /**
   * Fills arrival, queue, prefill, first token and end from the attributes; notes what they leave
   * out. {@code beforeQueue} names what happens between arrival and the queue in this engine.
   */
  static void read(SpanRecord e, EngineRequest.Builder b, String beforeQueue) {
    long arrival = e.startNs();
    b.arrival(arrival);
    long ttft = Attrs.seconds(e, TTFT);
    long e2e = Attrs.seconds(e, E2E);
    long queue = Attrs.seconds(e, QUEUE);
    long prefill = Attrs.seconds(e, PREFILL);
    long decode = Attrs.seconds(e, DECODE);
    if (ttft < 0) {
      b.note(e.name() + " has no " + TTFT + ": the first token is unknown");
      return;
    }
    long first = arrival + ttft;
    b.firstToken(first);
    if (e2e >= 0) {
      b.end(arrival + e2e);
    }
    if (prefill >= 0 && prefill <= ttft) {
      long scheduled = first - prefill;
      b.scheduled(scheduled).prefill(scheduled, first, PREFILL);
      if (queue >= 0 && queue <= scheduled - arrival) {
        b.queued(scheduled - queue);
        if (scheduled - queue > arrival) {
          b.note(String.format("%.2f ms between arrival and the scheduler's queue (%s) are not broken down by the engine",
              (scheduled - queue - arrival) / 1e6, beforeQueue));
        }
      } else {
        b.note(queue < 0 ? "no " + QUEUE + ": the time before the prefill is counted as queue"
            : QUEUE + " exceeds the time before the prefill: counted up to the prefill");
      }
    } else if (queue >= 0 && queue <= ttft) {
      // no prefill figure: the queue is the only anchor, at arrival
      b.scheduled(arrival + queue);
      b.note("no " + PREFILL + ": queue placed at arrival, the rest up to the first token counted as prefill");
      b.prefill(arrival + queue, first, QUEUE + " to " + TTFT);
    } else {
      b.note("no queue or prefill latency: only TTFT is known inside the engine");
    }
    if (decode >= 0) {
      b.note("decode: " + String.format("%.1f ms", decode / 1e6) + " in all; per-token times are not traced");
    }
  }
}
