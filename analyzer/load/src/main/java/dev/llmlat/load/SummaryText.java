package dev.llmlat.load;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;

/**
 * The summary as vLLM's benchmark prints it (labels padded to 40 columns, figures to two decimals),
 * with the standard deviation and p90 beside its median and p99, the goodput's interval, and the
 * failures per kind.
 */
public final class SummaryText {
  private SummaryText() {}

  public static void print(LoadResult result, ServingMetrics m, PrintWriter out) {
    LoadConfig config = result.config();
    out.println(centred(" Serving Benchmark Result ", '='));
    line(out, "Successful requests:", Integer.toString(m.completed()));
    line(out, "Failed requests:", Integer.toString(m.failed()));
    if (m.cancelled() > 0) {
      line(out, "Cancelled in flight (not counted):", Integer.toString(m.cancelled()));
    }
    line(
        out,
        config.shape() instanceof LoadShape.Closed
            ? "Concurrency (closed loop):"
            : "Maximum request concurrency:",
        Integer.toString(config.maxConcurrency()));
    switch (config.shape()) {
      case LoadShape.Constant c ->
          line(out, "Request rate configured (RPS):", fixed(c.rate()) + " (constant)");
      case LoadShape.Poisson p ->
          line(out, "Request rate configured (RPS):", fixed(p.rate()) + " (Poisson)");
      case LoadShape.Closed c -> {}
    }
    line(out, "Benchmark duration (s):", fixed(m.durationS()));
    line(out, "Total input tokens:", Long.toString(m.totalInput()));
    line(out, "Total generated tokens:", Long.toString(m.totalOutput()));
    line(out, "Request throughput (req/s):", fixed(m.requestThroughput()));
    if (m.goodFraction() != null) {
      line(out, "Request goodput (req/s):", fixed(m.requestGoodput()));
      line(
          out,
          "Goodput (" + slos(config.slo()) + "):",
          String.format(
              Locale.ROOT,
              "%.1f%% (95%% CI %.1f-%.1f%%) of %d requests",
              100 * m.goodFraction().proportion(),
              100 * m.goodFraction().low(),
              100 * m.goodFraction().high(),
              m.completed() + m.failed()));
    }
    line(out, "Output token throughput (tok/s):", fixed(m.outputThroughput()));
    line(out, "Peak output token throughput (tok/s):", fixed(m.maxOutputTokensPerS()));
    line(out, "Peak concurrent requests:", Integer.toString(m.maxConcurrentRequests()));
    line(out, "Total token throughput (tok/s):", fixed(m.totalTokenThroughput()));
    latency(out, "Time to First Token", "TTFT", m.ttft());
    latency(out, "Time per Output Token (excl. 1st token)", "TPOT", m.tpot());
    latency(out, "Inter-token Latency", "ITL", m.itl());
    latency(out, "End-to-end Latency", "E2EL", m.e2el());
    if (m.queue().p99() > 0) {
      out.println(centred("Client Queue Time (due to sent)", '-'));
      line(out, "Mean queue time (ms):", fixed(m.queue().mean()));
      line(out, "P99 queue time (ms):", fixed(m.queue().p99()));
    }
    if (!m.errors().isEmpty()) {
      out.println(centred("Failures", '-'));
      for (Map.Entry<String, Long> e : m.errors().entrySet()) {
        line(out, e.getKey() + ":", Long.toString(e.getValue()));
      }
    }
    out.println("=".repeat(50));
  }

  private static void latency(PrintWriter out, String header, String name, Latency l) {
    out.println(centred(header, '-'));
    line(out, "Mean " + name + " (ms):", fixed(l.mean()));
    line(out, "Median " + name + " (ms):", fixed(l.median()));
    line(out, "Std " + name + " (ms):", fixed(l.std()));
    line(out, "P90 " + name + " (ms):", fixed(l.p90()));
    line(out, "P99 " + name + " (ms):", fixed(l.p99()));
  }

  private static String slos(Slo slo) {
    StringBuilder s = new StringBuilder();
    if (slo.ttft() != null) {
      s.append("TTFT <= ").append(fixed(slo.ttft().toNanos() / 1e6)).append(" ms");
    }
    if (slo.tpot() != null) {
      s.append(s.isEmpty() ? "" : ", ")
          .append("TPOT <= ")
          .append(fixed(slo.tpot().toNanos() / 1e6))
          .append(" ms");
    }
    return s.toString();
  }

  private static void line(PrintWriter out, String label, String value) {
    out.println(String.format(Locale.ROOT, "%-40s %s", label, value));
  }

  private static String fixed(double v) {
    return String.format(Locale.ROOT, "%.2f", v);
  }

  private static String centred(String text, char fill) {
    int pad = Math.max(0, 50 - text.length());
    return String.valueOf(fill).repeat(pad / 2) + text + String.valueOf(fill).repeat(pad - pad / 2);
  }
}
