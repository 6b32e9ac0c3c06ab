package dev.llmlat.cli;

import dev.llmlat.report.AttributionReport;
import dev.llmlat.report.GroupReport;
import dev.llmlat.report.LateRanks;
import dev.llmlat.report.Report;
import dev.llmlat.store.ClickHouseStore;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "report",
    mixinStandardHelpOptions = true,
    description = {
      "TTFT components across requests, the SLO violation rate and the top causes.",
      "p50/p90/p99 of each component, the violation rate with a Wilson 95%% interval; reads llm_request_attribution",
      "(run llmlat analyze first)."
    })
final class ReportCommand implements Callable<Integer> {
  @Mixin StoreOptions store;

  @Option(
      names = "--since",
      paramLabel = "DURATION",
      description = "Only requests that arrived this long ago or later (e.g. 15m).")
  String since;

  @Option(
      names = "--slo-ttft",
      paramLabel = "MS",
      defaultValue = "500",
      description = "TTFT objective in ms. Default: ${DEFAULT-VALUE}.")
  double sloMs;

  enum Format {
    text,
    json
  }

  @Option(
      names = "--format",
      defaultValue = "text",
      description = "text or json. Default: ${DEFAULT-VALUE}.")
  Format format;

  @Option(
      names = "--html",
      paramLabel = "FILE",
      description = "Also write a self-contained HTML page (no external assets).")
  Path html;

  enum By {
    tenant,
    instance,
    model,
    service,
    rank
  }

  @Option(
      names = "--by",
      paramLabel = "DIMENSION",
      description =
          "tenant, instance, model or service: per group, TTFT quantiles, SLO violations with their Wilson interval and the"
              + " largest component; tenant adds the interference matrix (the share of each tenant's waiting that each tenant's"
              + " requests caused), instance the components of disaggregated requests per instance; rank: the late"
              + " tensor-parallel ranks requests waited for.")
  By by;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    if (!(sloMs > 0) || Double.isInfinite(sloMs)) {
      throw new IllegalArgumentException("--slo-ttft must be positive, got " + sloMs);
    }
    // Before the report is computed: a path that cannot be written fails at once (exit 2).
    OutputFile htmlFile = html == null ? null : OutputFile.check("--html", html);
    long from =
        since == null
            ? 0
            : System.currentTimeMillis() * 1_000_000L - Durations.parse(since).toNanos();
    Report report;
    try (ClickHouseStore s = store.open()) {
      long slo = Math.round(sloMs * 1e6);
      report =
          by == null
              ? AttributionReport.load(s, from, slo)
              : switch (by) {
                case rank -> LateRanks.load(s, from);
                case tenant -> GroupReport.load(s, GroupReport.Dimension.TENANT, from, slo);
                case instance -> GroupReport.load(s, GroupReport.Dimension.INSTANCE, from, slo);
                case model -> GroupReport.load(s, GroupReport.Dimension.MODEL, from, slo);
                case service -> GroupReport.load(s, GroupReport.Dimension.SERVICE, from, slo);
              };
    }
    PrintWriter out = spec.commandLine().getOut();
    if (format == Format.json) {
      out.print(report.json());
    } else {
      report.printText(out);
    }
    if (htmlFile != null) {
      byte[] page = report.html().getBytes(StandardCharsets.UTF_8);
      htmlFile.write(o -> o.write(page));
      out.println("wrote " + htmlFile.path());
    }
    out.flush();
    return 0;
  }
}
