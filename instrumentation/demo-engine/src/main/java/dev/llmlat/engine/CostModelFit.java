package dev.llmlat.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Fits {@link StepCostModel} to a real capture (traces/h200-tinylm/&lt;run&gt;): each line of
 * {@code cuda_events.jsonl} is one step with its {@code kind}, {@code trace_ids} and {@code
 * gpu_elapsed_ms}; {@code requests.jsonl} gives each trace's {@code prompt_len}. Prefill steps: ms
 * = a + b·(prompt tokens); decode steps: ms = c + d·(requests in the batch); both by least squares
 * with non-negative coefficients (a negative slope or base would make the model predict negative
 * step times outside the data).
 *
 * <p>Run: {@code java -cp ... dev.llmlat.engine.CostModelFit
 * ../shared/traces/h200-tinylm/unprofiled/b [more dirs]}
 */
public final class CostModelFit {
  private CostModelFit() {}

  /** y = intercept + slope·x over {@code points} steps. */
  public record Line(
      double intercept, double slope, int points, double rSquared, double meanAbsErrorMs) {
    public double at(double x) {
      return intercept + slope * x;
    }
  }

  /** Both fitted lines of one capture. */
  public record Result(Path capture, Line prefill, Line decode) {
    public StepCostModel model() {
      return new StepCostModel(
          prefill.intercept(), prefill.slope(), decode.intercept(), decode.slope());
    }
  }

  /** One step of a capture: its kind, prompt tokens prefilled and requests decoded. */
  public record CapturedStep(
      String kind, int prefillTokens, int decodeRequests, double gpuElapsedMs) {}

  public static Result fit(Path capture) throws IOException {
    List<CapturedStep> steps = read(capture);
    List<double[]> prefill = new ArrayList<>();
    List<double[]> decode = new ArrayList<>();
    for (CapturedStep s : steps) {
      if (s.kind().equals("prefill")) {
        prefill.add(new double[] {s.prefillTokens(), s.gpuElapsedMs()});
      } else if (s.kind().equals("decode")) {
        decode.add(new double[] {s.decodeRequests(), s.gpuElapsedMs()});
      }
    }
    return new Result(capture, nonNegativeLeastSquares(prefill), nonNegativeLeastSquares(decode));
  }

  public static List<CapturedStep> read(Path capture) throws IOException {
    ObjectMapper json = new ObjectMapper();
    Map<String, Integer> promptTokens = new HashMap<>();
    for (JsonNode r : lines(json, capture.resolve("requests.jsonl"))) {
      promptTokens.put(r.get("trace_id").asText(), r.get("prompt_len").asInt());
    }
    List<CapturedStep> steps = new ArrayList<>();
    for (JsonNode e : lines(json, capture.resolve("cuda_events.jsonl"))) {
      String kind = e.get("kind").asText();
      int tokens = 0;
      int requests = 0;
      for (JsonNode id : e.get("trace_ids")) {
        requests++;
        Integer prompt = promptTokens.get(id.asText());
        if (prompt == null) {
          throw new IOException(
              capture + ": step names trace " + id.asText() + ", absent from requests.jsonl");
        }
        tokens += prompt;
      }
      boolean prefill = kind.equals("prefill");
      steps.add(
          new CapturedStep(
              kind,
              prefill ? tokens : 0,
              prefill ? 0 : requests,
              e.get("gpu_elapsed_ms").asDouble()));
    }
    return steps;
  }

  /**
   * Least squares of y = a + b·x subject to a, b &ge; 0. With two coefficients the optimum is the
   * unconstrained one when feasible, else the better of the two boundary fits (b = 0 or a = 0).
   */
  static Line nonNegativeLeastSquares(List<double[]> points) {
    int n = points.size();
    if (n < 2) {
      throw new IllegalArgumentException("at least two steps are needed to fit a line, got " + n);
    }
    double mx = 0;
    double my = 0;
    for (double[] p : points) {
      mx += p[0];
      my += p[1];
    }
    mx /= n;
    my /= n;
    double sxx = 0;
    double sxy = 0;
    double xx = 0;
    double xy = 0;
    for (double[] p : points) {
      sxx += (p[0] - mx) * (p[0] - mx);
      sxy += (p[0] - mx) * (p[1] - my);
      xx += p[0] * p[0];
      xy += p[0] * p[1];
    }
    List<double[]> candidates = new ArrayList<>();
    if (sxx > 0) {
      double b = sxy / sxx;
      candidates.add(new double[] {my - b * mx, b});
    }
    candidates.add(new double[] {my, 0});
    if (xx > 0) {
      candidates.add(new double[] {0, Math.max(0, xy / xx)});
    }
    double[] best = null;
    double bestSse = Double.POSITIVE_INFINITY;
    for (double[] c : candidates) {
      if (c[0] < 0 || c[1] < 0) {
        continue;
      }
      double sse = sse(points, c[0], c[1]);
      if (sse < bestSse) {
        bestSse = sse;
        best = c;
      }
    }
    double sst = 0;
    double mae = 0;
    for (double[] p : points) {
      sst += (p[1] - my) * (p[1] - my);
      mae += Math.abs(p[1] - (best[0] + best[1] * p[0]));
    }
    return new Line(best[0], best[1], n, sst == 0 ? 1 : 1 - bestSse / sst, mae / n);
  }

  private static double sse(List<double[]> points, double a, double b) {
    double sse = 0;
    for (double[] p : points) {
      double r = p[1] - (a + b * p[0]);
      sse += r * r;
    }
    return sse;
  }

  private static List<JsonNode> lines(ObjectMapper json, Path file) throws IOException {
    List<JsonNode> nodes = new ArrayList<>();
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (!line.isBlank()) {
          nodes.add(json.readTree(line));
        }
      }
    }
    return nodes;
  }

  /**
   * Prints the fit of each capture directory given (default: the one the shipped constants use).
   */
  public static void main(String[] args) throws IOException {
    List<String> dirs =
        args.length == 0 ? List.of("../shared/traces/h200-tinylm/unprofiled/b") : List.of(args);
    for (String dir : dirs) {
      Result r = fit(Path.of(dir));
      System.out.println(r.capture());
      System.out.println(describe("  prefill ms = %.6f + %.9f * tokens", r.prefill()));
      System.out.println(describe("  decode  ms = %.6f + %.9f * batch", r.decode()));
    }
  }

  private static String describe(String format, Line line) {
    return String.format(
        Locale.ROOT,
        format + "   (%d steps, R^2 %.3f, mean |error| %.1f ms)",
        line.intercept(),
        line.slope(),
        line.points(),
        line.rSquared(),
        line.meanAbsErrorMs());
  }
}
