package dev.llmlat.attribution;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every step the engines show, per engine instance, sorted by start for queries by time (a binary
 * search, never a scan of all steps per request). An instance's steps come from the first source
 * that has any, most direct first: the engine's own step spans (the scheduler SDK's {@code step}),
 * TGI's {@code batch} spans, vLLM's {@code vllm_step_execution} and SGLang's forward slices (one
 * copy per request, merged by time), then GPU step ranges (NVTX). A step's instance is that of the
 * requests it served.
 */
final class StepIndex {
  /** Per-request copies of the engine's steps, in the requests' own traces (vLLM, SGLang). */
  static final Set<String> PER_REQUEST_STEPS =
      Set.of("vllm_step_execution", "chunked_prefill", "prefill_forward", "decode_loop");

  /**
   * One step.
   *
   * @param prefill the requests whose prompt it ran, with their tokens in it (0 when unknown)
   * @param decodes how many requests it decoded
   * @param batch requests in it
   */
  record Step(
      long startNs,
      long endNs,
      Map<String, Long> prefill,
      int decodes,
      int batch,
      List<String> served,
      SchedulerState state,
      String source) {}

  private record Sorted(List<Step> steps, long longestNs) {}

  private static final Sorted EMPTY = new Sorted(List.of(), 0);
  private final Map<String, Sorted> byInstance;
  private final Map<String, Long> promptTokens;

  private StepIndex(Map<String, Sorted> byInstance, Map<String, Long> promptTokens) {
    this.byInstance = byInstance;
    this.promptTokens = promptTokens;
  }

  boolean has(String instance) {
    return byInstance.containsKey(instance);
  }

  /** The prompt tokens a request's span reports (0 when unknown). */
  long promptTokens(String traceId) {
    return promptTokens.getOrDefault(traceId, 0L);
  }

  /** The instance's steps overlapping [from, to), in start order. */
  List<Step> overlapping(String instance, long from, long to) {
    Sorted s = byInstance.getOrDefault(instance, EMPTY);
    List<Step> steps = s.steps();
    long earliest = from - s.longestNs();
    int lo = 0;
    int hi = steps.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (steps.get(mid).startNs() < earliest) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    List<Step> out = new ArrayList<>();
    for (int i = lo; i < steps.size() && steps.get(i).startNs() < to; i++) {
      if (steps.get(i).endNs() > from) {
        out.add(steps.get(i));
      }
    }
    return out;
  }

  static StepIndex build(RequestView.Index index, List<SpanRecord> requests) {
    Map<String, String> instanceOf = new HashMap<>();
    // a disaggregated request's trace has a request span per instance: a step is the one's it ran
    // inside
    Map<String, List<SpanRecord>> sides = new HashMap<>();
    Map<String, Long> prompt = new HashMap<>();
    for (SpanRecord r : requests) {
      if (!instanceOf.containsKey(r.traceId())) {
        instanceOf.put(r.traceId(), r.engineInstance());
      } else {
        sides.computeIfAbsent(r.traceId(), k -> new ArrayList<>()).add(r);
      }
      long tokens =
          r.longAttr("gen_ai.usage.input_tokens", r.longAttr("gen_ai.usage.prompt_tokens", 0));
      if (tokens > 0) {
        prompt.put(r.traceId(), tokens);
      }
    }
    // every instance a step can be placed on: once each has steps, the later sources have nothing
    // to give
    java.util.Set<String> instances = new java.util.HashSet<>(instanceOf.values());
    sides.values().forEach(rs -> rs.forEach(r -> instances.add(r.engineInstance())));
    Scan scan = Scan.of(index);
    Map<String, Sorted> byInstance = new HashMap<>();
    // each source in turn gives the instances no earlier one has: a step is made only for those
    Placement placement =
        (served, startNs) -> {
          for (String t : served) {
            String instance = instanceAt(t, startNs, instanceOf, sides);
            if (instance != null) {
              return byInstance.containsKey(instance) ? null : instance;
            }
          }
          return null;
        };
    put(byInstance, engineSteps(index, scan, placement));
    if (!byInstance.keySet().containsAll(instances)) {
      put(byInstance, tgiBatches(scan, placement));
    }
    if (!byInstance.keySet().containsAll(instances)) {
      put(byInstance, perRequestSteps(scan, placement));
    }
    if (!byInstance.keySet().containsAll(instances)) {
      put(byInstance, gpuSteps(index, placement));
    }
    return new StepIndex(byInstance, prompt);
  }

  private static void put(Map<String, Sorted> byInstance, Map<String, List<Step>> found) {
    found.forEach(
        (instance, steps) -> {
          steps.sort(Comparator.comparingLong(Step::startNs));
          byInstance.put(
              instance,
              new Sorted(
                  steps, steps.stream().mapToLong(x -> x.endNs() - x.startNs()).max().orElse(0)));
        });
  }

  /**
   * The instance a step that served {@code served} and started at {@code startNs} is indexed under,
   * or null when none wants it.
   */
  @FunctionalInterface
  private interface Placement {
    String instanceFor(List<String> served, long startNs);

    /**
     * Adds the step {@code make} builds under its instance, when it has one the source is to give.
     */
    default void add(
        Map<String, List<Step>> found,
        List<String> served,
        long startNs,
        java.util.function.Supplier<Step> make) {
      String instance = instanceFor(served, startNs);
      if (instance != null) {
        found.computeIfAbsent(instance, k -> new ArrayList<>()).add(make.get());
      }
    }
  }

  /**
   * What the sources read from every span of the loaded traces, found in one pass over them (in the
   * traces' order): the scheduler SDK's prefill chunks by step, TGI's batch spans and vLLM's and
   * SGLang's per-request step copies.
   */
  private record Scan(
      Map<String, Map<String, Long>> chunks,
      List<SpanRecord> batches,
      List<List<SpanRecord>> batchTraces,
      Map<String, List<SpanRecord>> copiesByTime) {
    static Scan of(RequestView.Index index) {
      Map<String, Map<String, Long>> chunks = new HashMap<>();
      List<SpanRecord> batches = new ArrayList<>();
      List<List<SpanRecord>> batchTraces = new ArrayList<>();
      Map<String, List<SpanRecord>> byTime = new LinkedHashMap<>();
      for (List<SpanRecord> trace : index.byTrace.values()) {
        for (SpanRecord s : trace) {
          String name = s.name();
          if ("prefill".equals(name)) {
            String step =
                LayerNames.GPU.equals(s.layer()) ? "" : s.attr(LlmlatAttributes.STEP_SPAN_ID);
            if (!step.isEmpty()) {
              chunks
                  .computeIfAbsent(step, k -> new LinkedHashMap<>())
                  .merge(s.traceId(), s.longAttr(LlmlatAttributes.PREFILL_TOKENS, 0), Long::sum);
            }
          } else if ("batch".equals(name)) {
            if (!s.links().isEmpty() && !LayerNames.GPU.equals(s.layer())) {
              batches.add(s);
              batchTraces.add(trace);
            }
          } else if (PER_REQUEST_STEPS.contains(name)) {
            byTime
                .computeIfAbsent(
                    name.equals("vllm_step_execution")
                        ? "v" + s.startNs() + "/" + s.endNs()
                        : "s" + s.startNs() + "/" + s.endNs(),
                    k -> new ArrayList<>())
                .add(s);
          }
        }
      }
      return new Scan(chunks, batches, batchTraces, byTime);
    }
  }

  /**
   * The instance of trace {@code t}'s request span that was open at {@code atNs}, else its first.
   */
  private static String instanceAt(
      String t, long atNs, Map<String, String> instanceOf, Map<String, List<SpanRecord>> sides) {
    for (SpanRecord r : sides.getOrDefault(t, List.of())) {
      if (atNs >= r.startNs() && atNs <= r.endNs()) {
        return r.engineInstance();
      }
    }
    return instanceOf.get(t);
  }

  /** The scheduler SDK's step spans; its prefill chunks name their step and their tokens. */
  private static Map<String, List<Step>> engineSteps(
      RequestView.Index index, Scan scan, Placement placement) {
    Map<String, List<Step>> out = new HashMap<>();
    for (SpanRecord s : index.engineSteps) {
      List<String> served = index.served(s);
      placement.add(
          out,
          served,
          s.startNs(),
          () -> {
            String kind = s.attr(LlmlatAttributes.STEP_KIND);
            Map<String, Long> prefill = scan.chunks().getOrDefault(s.spanId(), Map.of());
            if (prefill.isEmpty() && "prefill".equals(kind)) {
              prefill = allOf(served);
            }
            int batch = (int) s.longAttr(LlmlatAttributes.STEP_BATCH_SIZE, served.size());
            int decodes =
                (int)
                    s.longAttr(
                        LlmlatAttributes.STEP_DECODE_TOKENS, Math.max(0, batch - prefill.size()));
            return new Step(
                s.startNs(),
                s.endNs(),
                prefill,
                decodes,
                batch,
                served,
                SchedulerState.of(s),
                "engine step");
          });
    }
    return out;
  }

  /** TGI's batch spans (traces of their own), linked to the requests they ran. */
  private static Map<String, List<Step>> tgiBatches(Scan scan, Placement placement) {
    Map<String, List<Step>> out = new HashMap<>();
    for (int i = 0; i < scan.batches().size(); i++) {
      SpanRecord s = scan.batches().get(i);
      List<SpanRecord> trace = scan.batchTraces().get(i);
      List<String> served =
          s.links().stream()
              .map(SpanRecord.Link::traceId)
              .filter(t -> !t.startsWith("0000000000000000"))
              .distinct()
              .toList();
      placement.add(
          out,
          served,
          s.startNs(),
          () -> {
            // the queue (backends/v3/src/queue.rs) opens a new batch's span, the backend the decode
            // batches'
            boolean prefill =
                s.attr("code.namespace").endsWith("::queue")
                    || s.attr("code.filepath").endsWith("queue.rs")
                    || trace.stream()
                        .anyMatch(
                            c -> c.parentSpanId().equals(s.spanId()) && "prefill".equals(c.name()));
            int batch = (int) s.longAttr("batch_size", served.size());
            return new Step(
                s.startNs(),
                s.endNs(),
                prefill ? allOf(served) : Map.of(),
                prefill ? 0 : batch,
                batch,
                served,
                SchedulerState.of(s),
                "batch");
          });
    }
    return out;
  }

  /** vLLM's and SGLang's per-request copies of a step, merged by their times into one step. */
  private static Map<String, List<Step>> perRequestSteps(Scan scan, Placement placement) {
    Map<String, List<Step>> out = new HashMap<>();
    for (List<SpanRecord> copies : scan.copiesByTime().values()) {
      Map<String, Long> prefill = new LinkedHashMap<>();
      List<String> served = new ArrayList<>();
      int decodes = 0;
      for (SpanRecord s : copies) {
        if (served.contains(s.traceId())) {
          continue;
        }
        served.add(s.traceId());
        boolean isPrefill =
            s.name().equals("vllm_step_execution")
                ? "prefill".equals(s.attr("phase"))
                : !s.name().equals("decode_loop");
        if (isPrefill) {
          prefill.put(s.traceId(), 0L);
        } else {
          decodes++;
        }
      }
      SpanRecord first = copies.get(0);
      int decoded = decodes;
      placement.add(
          out,
          served,
          first.startNs(),
          () -> {
            int batch =
                (int) first.longAttr("num_prefill_requests", -1) >= 0
                    ? (int)
                        (first.longAttr("num_prefill_requests", 0)
                            + first.longAttr("num_decode_requests", 0))
                    : served.size();
            return new Step(
                first.startNs(),
                first.endNs(),
                prefill,
                decoded,
                Math.max(batch, served.size()),
                served,
                SchedulerState.of(first),
                first.name());
          });
    }
    return out;
  }

  /**
   * GPU step ranges (NVTX {@code prefill <id>} / {@code decode <ids>}): the kind names what each
   * served.
   */
  private static Map<String, List<Step>> gpuSteps(RequestView.Index index, Placement placement) {
    Map<String, List<Step>> out = new HashMap<>();
    for (SpanRecord g : index.gpuSteps) {
      List<String> served = index.served(g);
      placement.add(
          out,
          served,
          g.startNs(),
          () -> {
            boolean decode = "decode".equals(g.attr(LlmlatAttributes.STEP_KIND));
            return new Step(
                g.startNs(),
                g.endNs(),
                decode ? Map.of() : allOf(served),
                decode ? served.size() : 0,
                served.size(),
                served,
                SchedulerState.of(g),
                "gpu step");
          });
    }
    return out;
  }

  private static Map<String, Long> allOf(List<String> traces) {
    Map<String, Long> out = new LinkedHashMap<>();
    traces.forEach(t -> out.put(t, 0L));
    return out;
  }
}
