package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Text Generation Inference's router spans (router/src/server.rs, backends/v3 queue and backend,
 * through tracing-opentelemetry): an INTERNAL handler span ({@code chat_completions}, {@code
 * generate_stream}, {@code generate}, {@code completions}) under the gateway's span, its timings as
 * Rust duration text ({@code validation_time}, {@code queue_time}, {@code inference_time}); under
 * it {@code schedule} (from the request's arrival), {@code queued} (until it joins a batch), one
 * {@code infer} per batch it joins and one {@code send_generation} per token. Each forward pass is
 * a {@code batch} span in a trace of its own, linked to the {@code infer} spans of the requests it
 * ran: the batch's other requests are batch interference.
 */
public final class TgiAdapter implements EngineAdapter {
  // TGI's scope is the Rust exporter's, shared by any Rust service: its handler names are what name
  // it
  private static final SpanCondition HANDLERS =
      SpanCondition.name("chat_completions", "generate_stream", "generate", "completions");
  private static final RequestRule RULE =
      new RequestRule(
          HANDLERS,
          SpanCondition.attributeMatches("queue_time", RustDurations.REGEX),
          HANDLERS,
          Set.of("batch"));
  private static final Pattern ADAPTER_ID = Pattern.compile("adapter_id: Some\\(\"([^\"]*)\"\\)");
  private static final Pattern FINISH = Pattern.compile("finish_reason: (\\w+)");

  @Override
  public String name() {
    return "TGI";
  }

  @Override
  public String cannotShow() {
    return "the engine instance (nothing identifies the process), prompt tokens, the model outside chat requests";
  }

  @Override
  public RequestRule requestRule() {
    return RULE;
  }

  @Override
  public EngineRequest read(SpanRecord handler, TraceContext context) {
    EngineRequest.Builder b = EngineRequest.builder(name(), handler);
    Matcher model = ADAPTER_ID.matcher(handler.attr("parameters"));
    if (model.find()) {
      b.model(model.group(1));
    }
    List<SpanRecord> descendants = descendants(handler, context);
    SpanRecord schedule = first(descendants, "schedule");
    SpanRecord queued = first(descendants, "queued");
    long queueTime = RustDurations.parseNs(handler.attr("queue_time"));
    long arrival =
        schedule != null
            ? schedule.startNs()
            : queued != null ? queued.startNs() : handler.startNs();
    long scheduled = queued != null ? queued.endNs() : queueTime >= 0 ? arrival + queueTime : -1;
    b.queued(arrival).scheduled(scheduled);
    if (arrival > handler.startNs()) {
      for (SpanRecord s : descendants) {
        if (Set.of("apply_chat_template", "validate", "tokenize").contains(s.name())
            && s.startNs() < arrival) {
          b.handling(s.startNs(), Math.min(s.endNs(), arrival), s.name());
        }
      }
      b.handling(handler.startNs(), arrival, "validation and tokenization");
    }
    List<SpanRecord> tokens =
        new ArrayList<>(
            descendants.stream().filter(s -> "send_generation".equals(s.name())).toList());
    tokens.sort(Comparator.comparingLong(SpanRecord::startNs));
    long firstToken = tokens.isEmpty() ? -1 : tokens.get(0).startNs();
    b.firstToken(firstToken);
    if (tokens.size() > 1) {
      b.decodeTokens(
          tokens.subList(1, tokens.size()).stream().mapToLong(SpanRecord::startNs).toArray());
      Matcher finish = FINISH.matcher(tokens.get(tokens.size() - 1).attr("generation"));
      if (finish.find()) {
        b.finishReason(finish.group(1));
      }
    }
    b.tokens(0, tokens.size());
    // the passes that ran the prompt: batches linked to this request's infer spans, up to the first
    // token
    List<SpanRecord> infers =
        new ArrayList<>(descendants.stream().filter(s -> "infer".equals(s.name())).toList());
    infers.sort(Comparator.comparingLong(SpanRecord::startNs));
    for (SpanRecord infer : infers) {
      if (firstToken >= 0 && infer.startNs() >= firstToken) {
        break;
      }
      for (SpanRecord batch : context.linking(infer)) {
        if (!"batch".equals(batch.name())) {
          continue;
        }
        List<String> others = new ArrayList<>();
        for (SpanRecord.Link l : batch.links()) {
          if (!l.traceId().equals(handler.traceId()) && !others.contains(l.traceId())) {
            others.add(l.traceId());
          }
        }
        int size = (int) batch.longAttr("batch_size", others.size() + 1);
        b.prefill(
            new EngineRequest.Prefill(
                batch.startNs(),
                firstToken >= 0 ? Math.min(batch.endNs(), firstToken) : batch.endNs(),
                "batch",
                "",
                0,
                0,
                size,
                others.stream().filter(t -> !t.startsWith("0000000000000000")).toList()));
      }
    }
    if (infers.isEmpty() && scheduled >= 0 && firstToken >= 0) {
      b.prefill(scheduled, firstToken, "queue_time to first send_generation");
      b.note(
          "no batch spans linked to this request: scheduled to first token is one prefill interval");
    }
    b.note(
        "TGI names no process: replicas are told apart by the address the gateway called, or by service name");
    return b.build();
  }

  private static List<SpanRecord> descendants(SpanRecord root, TraceContext context) {
    List<SpanRecord> out = new ArrayList<>();
    List<SpanRecord> frontier = new ArrayList<>(List.of(root));
    for (int depth = 0; depth < 16 && !frontier.isEmpty(); depth++) {
      List<SpanRecord> next = new ArrayList<>();
      for (SpanRecord s : frontier) {
        next.addAll(context.children(s));
      }
      out.addAll(next);
      frontier = next;
    }
    return out;
  }

  private static SpanRecord first(List<SpanRecord> spans, String name) {
    return spans.stream()
        .filter(s -> s.name().equals(name))
        .min(Comparator.comparingLong(SpanRecord::startNs))
        .orElse(null);
  }
}
