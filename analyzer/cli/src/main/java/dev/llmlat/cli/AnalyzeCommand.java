package dev.llmlat.cli;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.metrics.MetricsExport;
import dev.llmlat.runtime.process.ExitSequence;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "analyze",
    mixinStandardHelpOptions = true,
    description = {
      "Aligns clocks and attributes every new request's TTFT and inter-token gaps.",
      "Writes one row per request to llm_request_attribution (re-running is idempotent), and records each",
      "request it attributes on OpenTelemetry metrics (--metrics-port, --metrics-otlp-endpoint)."
    })
final class AnalyzeCommand implements Callable<Integer> {
  @Mixin StoreOptions store;
  @Mixin MetricsOptions metrics;

  @Option(
      names = "--since",
      paramLabel = "DURATION",
      description =
          "Only requests that arrived this long ago or later (e.g. 15m, 2h). Default: all.")
  String since;

  @Option(names = "--all", description = "Re-attribute requests that already have a row, too.")
  boolean all;

  @Option(names = "--follow", description = "Keep going: analyze new requests every --interval.")
  boolean follow;

  @Option(
      names = "--interval",
      defaultValue = "5s",
      description = "Pause between rounds with --follow. Default: ${DEFAULT-VALUE}.")
  String interval;

  @Option(
      names = "--tenant-attr",
      paramLabel = "KEY",
      defaultValue = LlmlatAttributes.TENANT,
      description =
          "The span attribute (of the client's, the gateway's or the engine's span) that names a request's tenant."
              + " Default: ${DEFAULT-VALUE}.")
  String tenantAttr;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    long from =
        since == null
            ? 0
            : System.currentTimeMillis() * 1_000_000L - Durations.parse(since).toNanos();
    long pause = Durations.parse(interval).toMillis();
    PrintWriter out = spec.commandLine().getOut();
    try (MetricsExport m = MetricsExport.start(metrics.config("llmlat-analyze"));
        ClickHouseStore s = store.open()) {
      ExitSequence.register(
          "sending the last metrics", m::close, 15_000); // --follow ends on a signal
      if (m.config().exported()) {
        out.println("attribution metrics: " + m.description());
      }
      Analyzer analyzer = new Analyzer(s).withTenantAttribute(tenantAttr);
      do {
        long t0 = System.nanoTime();
        Analyzer.Summary summary = analyzer.analyze(from, Long.MAX_VALUE / 2, !all, m::record);
        double seconds = (System.nanoTime() - t0) / 1e9;
        out.printf(
            "attributed %d requests in %.2f s%s%n",
            summary.written(),
            seconds,
            summary.written() > 0
                ? String.format(
                    " (%,.0f requests/s) into llm_request_attribution", summary.written() / seconds)
                : "");
        out.flush();
        if (follow) {
          Thread.sleep(pause);
        }
      } while (follow);
    }
    return 0;
  }
}
