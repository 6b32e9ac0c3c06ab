package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatSpanNames;
import java.util.List;
import java.util.Set;

/**
 * llmlat's scheduler SDK: an {@code llm_request} span on a resource with {@code
 * llmlat.layer=engine}, children {@code queue}, {@code prefill} (one per chunk, naming its engine
 * step) and {@code decode} (token times as deltas), the first token and preemptions as events.
 */
public final class SchedulerSdkAdapter implements EngineAdapter {
  static final String QUEUE = "queue";
  static final String PREFILL = "prefill";
  static final String DECODE = "decode";
  // the layer alone says ours: the SDK names no engine, so a span that names one (vLLM's scope) is
  // that engine's
  private static final RequestRule RULE =
      new RequestRule(
          SpanCondition.name(LlmlatSpanNames.REQUEST),
          SpanCondition.layer(LlmlatAttributes.LAYER_ENGINE),
          SpanCondition.NEVER,
          Set.of(LlmlatSpanNames.STEP));

  @Override
  public String name() {
    return "llmlat scheduler SDK";
  }

  @Override
  public RequestRule requestRule() {
    return RULE;
  }

  @Override
  public EngineRequest read(SpanRecord e, TraceContext context) {
    EngineRequest.Builder b = Attrs.genAiRequest(name(), e);
    SpanRecord decode = null;
    long firstQueueEnd = -1;
    long firstPrefill = -1;
    long lastPrefillEnd = -1;
    for (SpanRecord s : context.children(e)) {
      switch (s.name()) {
        case QUEUE -> {
          b.wait(s.startNs(), s.endNs(), QUEUE);
          firstQueueEnd = firstQueueEnd < 0 ? s.endNs() : Math.min(firstQueueEnd, s.endNs());
        }
        case PREFILL -> {
          b.prefill(
              new EngineRequest.Prefill(
                  s.startNs(),
                  s.endNs(),
                  PREFILL,
                  s.attr(LlmlatAttributes.STEP_SPAN_ID),
                  s.longAttr(LlmlatAttributes.PREFILL_TOKENS, 0),
                  0,
                  0,
                  List.of()));
          firstPrefill = firstPrefill < 0 ? s.startNs() : Math.min(firstPrefill, s.startNs());
          lastPrefillEnd = Math.max(lastPrefillEnd, s.endNs());
        }
        case DECODE -> decode = s;
        default -> {}
      }
    }
    b.scheduled(firstPrefill >= 0 ? firstPrefill : firstQueueEnd);
    SpanRecord.Event first = e.event(LlmlatAttributes.EVENT_FIRST_TOKEN);
    if (first != null) {
      b.firstToken(first.timeNs());
    } else if (decode != null) {
      b.firstToken(decode.startNs());
    } else if (lastPrefillEnd >= 0) {
      b.firstToken(lastPrefillEnd);
    }
    if (decode != null) {
      List<String> deltas = decode.arrayAttr(LlmlatAttributes.DECODE_TOKEN_DELTAS_NS);
      long[] times = new long[deltas.size()];
      long t = decode.startNs();
      for (int i = 0; i < deltas.size(); i++) {
        t += Long.parseLong(deltas.get(i));
        times[i] = t;
      }
      b.decodeTokens(times);
    }
    for (SpanRecord.Event ev : e.events()) {
      if (LlmlatAttributes.EVENT_PREEMPTED.equals(ev.name())) {
        b.preempted(ev.timeNs());
      }
    }
    return b.build();
  }
}
