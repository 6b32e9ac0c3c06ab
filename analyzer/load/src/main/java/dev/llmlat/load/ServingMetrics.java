package dev.llmlat.load;

import dev.llmlat.stats.Wilson;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The benchmark's figures, defined as vLLM's benchmark ({@code vllm/benchmarks/serve.py}, {@code
 * calculate_metrics}) defines them, so the same requests give the same numbers: a request completed
 * when it was answered with 200 and a content chunk; input tokens are the server's {@code
 * usage.prompt_tokens} (else the client's estimate), output tokens its {@code
 * usage.completion_tokens} (else the content chunks); throughputs divide by the benchmark duration;
 * TTFT, TPOT ({@code (latency - ttft) / (output - 1)}, requests of more than one token), ITL (every
 * gap between content chunks, all requests pooled) and E2E latency over completed requests.
 * Requests cancelled by a stop are left out (they did not finish). Goodput: completed requests
 * meeting every SLO, per second as vLLM's {@code request_goodput}, and as a fraction of all
 * finished requests with its Wilson 95% interval.
 *
 * @param completed requests that succeeded
 * @param failed requests that failed
 * @param cancelled requests stopped in flight (not counted in either)
 * @param durationS the benchmark duration in seconds
 * @param totalInput input tokens of completed requests
 * @param totalOutput output tokens of completed requests
 * @param good completed requests meeting every SLO (0 without SLOs)
 * @param goodFraction {@code good} of all finished requests with its interval; null without SLOs or
 *     requests
 * @param maxOutputTokensPerS the most content chunks that arrived within one second of the run
 *     (vLLM's peak)
 * @param maxConcurrentRequests the most requests under way at once (vLLM's peak, over completed
 *     requests)
 * @param errors failed requests per kind ({@code HTTP 503}, {@code timeout}, ...)
 */
public record ServingMetrics(
    int completed,
    int failed,
    int cancelled,
    double durationS,
    long totalInput,
    long totalOutput,
    Latency ttft,
    Latency tpot,
    Latency itl,
    Latency e2el,
    Latency queue,
    int good,
    Wilson.Interval goodFraction,
    double maxOutputTokensPerS,
    int maxConcurrentRequests,
    Map<String, Long> errors) {

  public ServingMetrics {
    errors = Map.copyOf(errors);
  }

  public static ServingMetrics of(LoadResult result) {
    Slo slo = result.config().slo();
    int completed = 0;
    int failed = 0;
    int cancelled = 0;
    int good = 0;
    long input = 0;
    long output = 0;
    List<Double> ttfts = new ArrayList<>();
    List<Double> tpots = new ArrayList<>();
    List<Double> itls = new ArrayList<>();
    List<Double> e2els = new ArrayList<>();
    List<Double> queues = new ArrayList<>();
    Map<String, Long> errors = new TreeMap<>();
    for (RequestOutcome r : result.outcomes()) {
      if (r.cancelled()) {
        cancelled++;
        continue;
      }
      if (!r.success()) {
        failed++;
        errors.merge(r.failure().label(), 1L, Long::sum);
        continue;
      }
      completed++;
      input += r.inputTokens();
      output += r.outputTokens();
      ttfts.add(ms(r.ttftNanos()));
      if (r.outputTokens() > 1) {
        tpots.add(r.tpotNanos() / 1e6);
      }
      for (long gap : r.chunkDeltasNanos()) {
        itls.add(ms(gap));
      }
      e2els.add(ms(r.latencyNanos()));
      queues.add(ms(r.queueNanos()));
      if (slo.any() && slo.met(r)) {
        good++;
      }
    }
    int finished = completed + failed;
    Wilson.Interval fraction = slo.any() && finished > 0 ? Wilson.of95(good, finished) : null;
    return new ServingMetrics(
        completed,
        failed,
        cancelled,
        result.durationNanos() / 1e9,
        input,
        output,
        Latency.of(array(ttfts)),
        Latency.of(array(tpots)),
        Latency.of(array(itls)),
        Latency.of(array(e2els)),
        Latency.of(array(queues)),
        good,
        fraction,
        peakChunksPerSecond(result),
        peakConcurrency(result),
        errors);
  }

  public double requestThroughput() {
    return perSecond(completed);
  }

  /** Completed requests meeting every SLO per second; NaN without SLOs. */
  public double requestGoodput() {
    return goodFraction == null ? Double.NaN : perSecond(good);
  }

  public double outputThroughput() {
    return perSecond(totalOutput);
  }

  public double totalTokenThroughput() {
    return perSecond(totalInput + totalOutput);
  }

  private double perSecond(double n) {
    return durationS > 0 ? n / durationS : 0;
  }

  /**
   * vLLM's {@code max_output_tokens_per_s}: chunks counted in one-second buckets from the first
   * start.
   */
  private static double peakChunksPerSecond(LoadResult result) {
    List<RequestOutcome> ok = result.outcomes().stream().filter(RequestOutcome::success).toList();
    if (ok.isEmpty()) {
      return 0;
    }
    long first = ok.stream().mapToLong(RequestOutcome::startNanos).min().orElseThrow();
    Map<Long, Integer> buckets = new TreeMap<>();
    int peak = 0;
    for (RequestOutcome r : ok) {
      for (long t : r.chunkNanos()) {
        peak = Math.max(peak, buckets.merge((t - first) / 1_000_000_000L, 1, Integer::sum));
      }
    }
    return peak;
  }

  /**
   * vLLM's {@code max_concurrent_requests}: the most [start, last chunk) intervals of completed
   * requests that overlap.
   */
  private static int peakConcurrency(LoadResult result) {
    List<long[]> events = new ArrayList<>();
    for (RequestOutcome r : result.outcomes()) {
      if (r.success()) {
        events.add(new long[] {r.startNanos(), 1});
        events.add(new long[] {r.startNanos() + r.latencyNanos(), -1});
      }
    }
    events.sort(
        (a, b) ->
            a[0] != b[0]
                ? Long.compare(a[0], b[0])
                : Long.compare(a[1], b[1])); // ends before starts
    int now = 0;
    int peak = 0;
    for (long[] e : events) {
      now += (int) e[1];
      peak = Math.max(peak, now);
    }
    return peak;
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }

  private static double[] array(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).toArray();
  }
}
