package dev.llmlat.load;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The result file ({@code --save-result}) in the layout of vLLM's benchmark result JSON, so tools
 * that read those read this: the keys, units and per-request arrays of {@code
 * vllm/benchmarks/serve.py} ({@code benchmark()} and {@code main_async()}, vLLM main at commit
 * 009e6d4a, as saved with {@code --save-result --save-detailed}) where the quantity is the same:
 * seconds for {@code duration}, {@code ttfts}, {@code itls}, {@code latencies}, {@code
 * queue_times}; milliseconds for {@code mean_/median_/std_/p90_/p99_{ttft,tpot,itl,e2el}_ms}.
 * Differences: {@code start_times} are Unix seconds (vLLM's are {@code perf_counter} readings),
 * there are no {@code generated_texts} (llmlat keeps no completion text), and TTFT ends at the
 * first non-empty content chunk. llmlat's own figures are under {@code llmlat_*} keys, which vLLM
 * does not use.
 */
public final class ResultFile {
  /** The vLLM source whose result layout this follows. */
  public static final String VLLM_REFERENCE =
      "vllm-project/vllm vllm/benchmarks/serve.py @ 009e6d4a1cd6";

  private static final ObjectMapper JSON = new ObjectMapper();

  private ResultFile() {}

  /** The result as a JSON object (callers may add keys before writing it). */
  public static ObjectNode of(LoadResult result, ServingMetrics m) {
    LoadConfig config = result.config();
    ObjectNode o = JSON.createObjectNode();
    o.put(
        "date",
        LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT)));
    o.put("endpoint_type", config.target().endpoint().vllmBackend());
    o.put("backend", config.target().endpoint().vllmBackend());
    o.putNull("label");
    o.put("model_id", config.model());
    o.putNull("tokenizer_id");
    o.put("num_prompts", result.outcomes().size());
    switch (config.shape()) {
      case LoadShape.Constant c ->
          o.put("request_rate", c.rate())
              .put("burstiness", "inf"); // vLLM: inf burstiness = constant gaps
      case LoadShape.Poisson p -> o.put("request_rate", p.rate()).put("burstiness", 1.0);
      case LoadShape.Closed c -> o.put("request_rate", "inf").put("burstiness", 1.0);
    }
    o.put("max_concurrency", config.maxConcurrency());
    o.put("duration", m.durationS());
    o.put("completed", m.completed());
    o.put("failed", m.failed());
    o.put("total_input_tokens", m.totalInput());
    o.put("total_output_tokens", m.totalOutput());
    o.put("request_throughput", m.requestThroughput());
    if (m.goodFraction() == null) {
      o.putNull("request_goodput");
    } else {
      o.put("request_goodput", m.requestGoodput());
    }
    o.put("output_throughput", m.outputThroughput());
    o.put("total_token_throughput", m.totalTokenThroughput());
    perRequest(o, result);
    o.put("max_output_tokens_per_s", m.maxOutputTokensPerS());
    o.put("max_concurrent_requests", m.maxConcurrentRequests());
    latency(o, "ttft", m.ttft());
    latency(o, "tpot", m.tpot());
    latency(o, "itl", m.itl());
    latency(o, "e2el", m.e2el());
    llmlat(o, result, m);
    return o;
  }

  /**
   * vLLM's per-request arrays, one entry per measured request in the order sent; failed ones as
   * vLLM leaves them (0, empty).
   */
  private static void perRequest(ObjectNode o, LoadResult result) {
    ArrayNode inputLens = o.putArray("input_lens");
    ArrayNode outputLens = o.putArray("output_lens");
    ArrayNode ttfts = o.putArray("ttfts");
    ArrayNode itls = o.putArray("itls");
    ArrayNode latencies = o.putArray("latencies");
    ArrayNode startTimes = o.putArray("start_times");
    ArrayNode queueTimes = o.putArray("queue_times");
    ArrayNode errors = o.putArray("errors");
    for (RequestOutcome r : result.outcomes()) {
      boolean ok = r.success();
      inputLens.add(r.inputTokens());
      outputLens.add(ok ? r.outputTokens() : 0);
      ttfts.add(ok ? r.ttftNanos() / 1e9 : 0.0);
      ArrayNode gaps = itls.addArray();
      if (ok) {
        for (long gap : r.chunkDeltasNanos()) {
          gaps.add(gap / 1e9);
        }
      }
      latencies.add(ok ? r.latencyNanos() / 1e9 : 0.0);
      startTimes.add(result.clock().unixNanos(r.startNanos()) / 1e9);
      queueTimes.add(r.queueNanos() / 1e9);
      errors.add(ok ? "" : r.failure().toString());
    }
  }

  private static void latency(ObjectNode o, String name, Latency l) {
    o.put("mean_" + name + "_ms", l.mean());
    o.put("median_" + name + "_ms", l.median());
    o.put("std_" + name + "_ms", l.std());
    o.put("p90_" + name + "_ms", l.p90());
    o.put("p99_" + name + "_ms", l.p99());
  }

  private static void llmlat(ObjectNode o, LoadResult result, ServingMetrics m) {
    LoadConfig config = result.config();
    o.put("llmlat_vllm_reference", VLLM_REFERENCE);
    o.put("llmlat_url", config.target().url().toString());
    o.put("llmlat_load_shape", config.shape().toString());
    o.put("llmlat_prompts", result.prompts());
    o.put("llmlat_warmup_requests", result.warmups());
    o.put("llmlat_stopped", result.stopped());
    o.put("llmlat_cancelled", m.cancelled());
    ArrayNode traces = o.putArray("llmlat_trace_ids");
    ArrayNode spans = o.putArray("llmlat_span_ids");
    ArrayNode statuses = o.putArray("llmlat_http_statuses");
    ArrayNode kinds = o.putArray("llmlat_error_types");
    for (RequestOutcome r : result.outcomes()) {
      traces.add(r.traceId());
      spans.add(r.spanId());
      statuses.add(r.httpStatus());
      kinds.add(r.success() ? "" : r.failure().errorType());
    }
    ObjectNode errors = o.putObject("llmlat_errors_by_kind");
    m.errors().forEach(errors::put);
    if (m.goodFraction() != null) {
      ObjectNode g = o.putObject("llmlat_goodput");
      Slo slo = config.slo();
      if (slo.ttft() != null) {
        g.put("slo_ttft_ms", slo.ttft().toNanos() / 1e6);
      }
      if (slo.tpot() != null) {
        g.put("slo_tpot_ms", slo.tpot().toNanos() / 1e6);
      }
      g.put("good", m.good());
      g.put("requests", m.completed() + m.failed());
      g.put("fraction", m.goodFraction().proportion());
      g.put("ci95_low", m.goodFraction().low());
      g.put("ci95_high", m.goodFraction().high());
    }
  }

  /**
   * Checks, before the run, that a file can be created beside {@code path}, by creating and
   * removing one there: permission bits do not tell (root passes them all; /proc and /sys refuse
   * new files whatever they say), and a run that finished should not be lost to a path that could
   * never work.
   *
   * @param option the option that named it, for messages
   * @throws IllegalArgumentException naming the path and why no file can be written there
   */
  public static void probe(String option, Path path) {
    Path target = path.toAbsolutePath().normalize();
    Path dir = target.getParent();
    if (dir == null) {
      throw new IllegalArgumentException(option + " " + target + ": names no file");
    }
    Path probe =
        dir.resolve(
            "."
                + target.getFileName()
                + "."
                + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36)
                + ".probe");
    try {
      Files.newOutputStream(probe, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
    } catch (IOException e) {
      throw new IllegalArgumentException(
          option + " " + target + ": cannot create a file in " + dir + " (" + reason(e, dir) + ")",
          e);
    }
    try {
      Files.delete(probe);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          option
              + " "
              + target
              + ": cannot remove a file from "
              + dir
              + " ("
              + reason(e, dir)
              + ")",
          e);
    }
  }

  private static String reason(IOException e, Path dir) {
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof NoSuchFileException) {
      return Files.isDirectory(dir)
          ? "the file system takes no new files there"
          : "the directory does not exist";
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return f.getReason();
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  /**
   * Writes {@code result} as JSON (one line, as vLLM's {@code json.dump}); leaves {@code out} open.
   */
  public static void write(ObjectNode result, OutputStream out) throws IOException {
    JSON.writer().without(JsonGenerator.Feature.AUTO_CLOSE_TARGET).writeValue(out, result);
  }
}
