package dev.llmlat.attribution;

import dev.llmlat.semconv.TtftComponent;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Splits the request's {@code queue} pieces of the critical path by what its engine instance ran
 * meanwhile (see {@link QueueBreakdown}): each instant goes to the step running then (a prefill
 * before a decode, else the earliest started when steps overlap), else to the engine loop between
 * steps; after a preemption, to waiting to resume. A step's time is shared among the requests it
 * prefilled and the decodes it ran by their tokens where the engine tells them, else equally. The
 * parts sum exactly to queue.
 */
final class QueueAnalyzer {
  static final String NO_STEPS = "cannot show why: the engine shows no steps";

  private QueueAnalyzer() {}

  static QueueBreakdown breakdown(
      String traceId,
      String instance,
      List<Attribution.Segment> path,
      List<Long> preemptions,
      StepIndex steps) {
    List<Attribution.Segment> queue =
        path.stream()
            .filter(s -> s.component().equals(TtftComponent.QUEUE.id()) && s.endNs() > s.startNs())
            .toList();
    long total = queue.stream().mapToLong(s -> s.endNs() - s.startNs()).sum();
    if (total == 0) {
      return QueueBreakdown.NONE;
    }
    if (!steps.has(instance)) {
      return new QueueBreakdown(
          List.of(new QueueBreakdown.Part(QueueBreakdown.NO_STEPS, NO_STEPS, total, "", 0, 0, 0)),
          "");
    }
    long preempted = preemptions.stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE);
    Tally t = new Tally(traceId, steps);
    for (Attribution.Segment s : queue) {
      long cut = Math.max(s.startNs(), Math.min(s.endNs(), preempted));
      // a disaggregated request queued on each of its instances
      String on = !s.instance().isEmpty() && steps.has(s.instance()) ? s.instance() : instance;
      t.waitedFor(on, s.startNs(), cut);
      t.preemptedNs += s.endNs() - cut;
    }
    return t.breakdown();
  }

  /** The sums per cause while the segments are swept. */
  private static final class Tally {
    final String self;
    final StepIndex steps;
    final Map<String, Long> prefillNs = new LinkedHashMap<>();
    final Map<String, Long> prefillTokens = new LinkedHashMap<>();
    final Map<String, Integer> prefillSteps = new LinkedHashMap<>();
    long decodeNs;
    int decodeSteps;
    int decodeBatch;
    long betweenNs;
    long preemptedNs;
    final Map<String, Long> limitNs = new LinkedHashMap<>();
    final Map<String, SchedulerState> limitWorst = new LinkedHashMap<>();

    Tally(String self, StepIndex steps) {
      this.self = self;
      this.steps = steps;
    }

    void waitedFor(String instance, long from, long to) {
      List<StepIndex.Step> running =
          steps.overlapping(instance, from, to).stream()
              .filter(s -> !s.served().contains(self))
              .toList();
      java.util.TreeSet<Long> cuts = new java.util.TreeSet<>(List.of(from, to));
      for (StepIndex.Step s : running) {
        cuts.add(Math.max(from, s.startNs()));
        cuts.add(Math.min(to, s.endNs()));
      }
      // each piece to a prefill running then, else a decode (one request's decode slice may span
      // another's prefill), the earliest started among equals; merged back into whole steps
      StepIndex.Step current = null;
      long currentNs = 0;
      Long previous = null;
      for (long cut : cuts) {
        if (previous != null && cut > previous) {
          StepIndex.Step best = null;
          for (StepIndex.Step s : running) {
            if (s.startNs() <= previous
                && s.endNs() >= cut
                && (best == null || (!s.prefill().isEmpty() && best.prefill().isEmpty()))) {
              best = s;
            }
          }
          if (best != current && current != null) {
            ranFor(current, currentNs);
            currentNs = 0;
          }
          current = best;
          if (best == null) {
            betweenNs += cut - previous;
          } else {
            currentNs += cut - previous;
          }
        }
        previous = cut;
      }
      if (current != null) {
        ranFor(current, currentNs);
      }
    }

    void ranFor(StepIndex.Step s, long ns) {
      List<String> others = s.prefill().keySet().stream().filter(x -> !x.equals(self)).toList();
      boolean tokensKnown = others.stream().allMatch(x -> s.prefill().get(x) > 0);
      // weights: prefill tokens and one token per decode where the engine tells them, else one per
      // request
      long[] w = new long[others.size() + 1];
      for (int i = 0; i < others.size(); i++) {
        w[i] = tokensKnown ? s.prefill().get(others.get(i)) : 1;
      }
      w[others.size()] = s.decodes();
      long[] share = split(ns, w);
      for (int i = 0; i < others.size(); i++) {
        String x = others.get(i);
        prefillNs.merge(x, share[i], Long::sum);
        prefillTokens.merge(x, s.prefill().get(x), Long::sum);
        prefillSteps.merge(x, 1, Integer::sum);
      }
      if (share[others.size()] > 0 || others.isEmpty()) {
        decodeNs += share[others.size()];
        decodeSteps++;
        decodeBatch = Math.max(decodeBatch, s.batch());
      }
      String binding = s.state().binding();
      if (!binding.isEmpty()) {
        limitNs.merge(binding, ns, Long::sum);
        SchedulerState worst = limitWorst.get(binding);
        if (worst == null || severity(binding, s.state()) > severity(binding, worst)) {
          limitWorst.put(binding, s.state());
        }
      }
    }

    QueueBreakdown breakdown() {
      List<QueueBreakdown.Part> parts = new ArrayList<>();
      prefillNs.forEach(
          (x, ns) -> {
            long tokens = prefillTokens.get(x) > 0 ? prefillTokens.get(x) : steps.promptTokens(x);
            parts.add(
                new QueueBreakdown.Part(
                    QueueBreakdown.PREFILL,
                    "behind prefill of request "
                        + x
                        + (tokens > 0 ? " (" + tokens + " tokens)" : ""),
                    ns,
                    x,
                    tokens,
                    0,
                    prefillSteps.get(x)));
          });
      if (decodeNs > 0) {
        parts.add(
            new QueueBreakdown.Part(
                QueueBreakdown.DECODE,
                "behind "
                    + decodeSteps
                    + " decode step"
                    + (decodeSteps == 1 ? "" : "s")
                    + " (batch up to "
                    + decodeBatch
                    + ")",
                decodeNs,
                "",
                0,
                decodeBatch,
                decodeSteps));
      }
      if (betweenNs > 0) {
        parts.add(
            new QueueBreakdown.Part(
                QueueBreakdown.BETWEEN_STEPS,
                "between steps: the engine loop, no step running",
                betweenNs,
                "",
                0,
                0,
                0));
      }
      if (preemptedNs > 0) {
        parts.add(
            new QueueBreakdown.Part(
                QueueBreakdown.PREEMPTED,
                "preempted, waiting to resume",
                preemptedNs,
                "",
                0,
                0,
                0));
      }
      parts.removeIf(p -> p.ns() == 0);
      parts.sort(Comparator.comparingLong(QueueBreakdown.Part::ns).reversed());
      String limit =
          limitNs.entrySet().stream()
              .max(Map.Entry.comparingByValue())
              .map(e -> limitWorst.get(e.getKey()).describe(e.getKey()))
              .orElse("");
      return new QueueBreakdown(parts, limit);
    }
  }

  /** How tight a limit was: the fuller cache, the larger batch or token count wins. */
  private static double severity(String binding, SchedulerState s) {
    return switch (binding) {
      case "kv" -> s.kvBlocksUsed() / (double) s.kvBlocksTotal();
      case "max_seqs" -> s.running();
      default -> s.scheduledTokens();
    };
  }

  /**
   * {@code ns} in integer shares proportional to {@code weights} that sum exactly to it (the
   * remainder to the largest).
   */
  static long[] split(long ns, long[] weights) {
    long sum = 0;
    int largest = 0;
    for (int i = 0; i < weights.length; i++) {
      sum += weights[i];
      largest = weights[i] > weights[largest] ? i : largest;
    }
    long[] out = new long[weights.length];
    if (sum == 0) {
      out[weights.length - 1] = ns;
      return out;
    }
    long given = 0;
    for (int i = 0; i < weights.length; i++) {
      out[i] = (long) Math.floor(ns * (weights[i] / (double) sum));
      given += out[i];
    }
    out[largest] += ns - given;
    return out;
  }
}
