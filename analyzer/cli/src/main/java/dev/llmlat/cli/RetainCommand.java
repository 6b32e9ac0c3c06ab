package dev.llmlat.cli;

import dev.llmlat.retention.Retention;
import dev.llmlat.retention.RetentionPolicy;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "retain",
    mixinStandardHelpOptions = true,
    description = {
      "Retention decided by attribution: of the requests older than --older-than, keeps every span and kernel of those",
      "over the TTFT objective, failed, the slowest per model and a sample of the rest, and deletes the others' spans and",
      "kernels (every llm_request_attribution row stays). Records what it kept and why in llmlat_kept_traces; running it",
      "again deletes nothing more. Run it from cron or with --follow. Run analyze first: unattributed requests are left alone."
    })
final class RetainCommand implements Callable<Integer> {
  @Mixin StoreOptions store;

  @Option(
      names = "--older-than",
      paramLabel = "DURATION",
      defaultValue = "24h",
      description =
          "Decide requests that arrived this long ago or earlier. Default: ${DEFAULT-VALUE}.")
  String olderThan;

  @Option(
      names = "--slo-ttft",
      paramLabel = "MS",
      defaultValue = "500",
      description = "Keep requests over this TTFT. Default: ${DEFAULT-VALUE}.")
  double sloMs;

  @Option(
      names = "--keep-slowest",
      paramLabel = "PCT",
      defaultValue = "1",
      description = "Keep the slowest PCT% of requests per model. Default: ${DEFAULT-VALUE}.")
  double keepSlowestPct;

  @Option(
      names = "--keep-rate",
      paramLabel = "FRACTION",
      defaultValue = "0.01",
      description =
          "Keep this share of the other requests (a sample by trace id, the same on every run). Default: ${DEFAULT-VALUE}.")
  double keepRate;

  @Option(names = "--follow", description = "Keep going: apply the policy every --interval.")
  boolean follow;

  @Option(
      names = "--interval",
      defaultValue = "10m",
      description = "Pause between rounds with --follow. Default: ${DEFAULT-VALUE}.")
  String interval;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    if (!(sloMs > 0) || Double.isInfinite(sloMs)) {
      throw new IllegalArgumentException("--slo-ttft must be positive, got " + sloMs);
    }
    if (!(keepSlowestPct >= 0 && keepSlowestPct <= 100)) {
      throw new IllegalArgumentException(
          "--keep-slowest must be a percentage in 0..100, got " + keepSlowestPct);
    }
    if (!(keepRate >= 0 && keepRate <= 1)) {
      throw new IllegalArgumentException(
          "--keep-rate must be in 0..1 (0.01 keeps 1%), got " + keepRate);
    }
    if (store.cluster != null && !store.cluster.isBlank()) {
      throw new IllegalArgumentException(
          "retain deletes from one node's tables; on a cluster (--cluster "
              + store.cluster
              + ") it is not supported yet: set a TTL on the _local tables instead");
    }
    RetentionPolicy policy =
        new RetentionPolicy(
            Durations.parse(olderThan), Math.round(sloMs * 1e6), keepSlowestPct / 100, keepRate);
    long pause = Durations.parse(interval).toMillis();
    PrintWriter out = spec.commandLine().getOut();
    try (ClickHouseStore s = store.open()) {
      do {
        Retention.Outcome o = Retention.apply(s, policy, System.currentTimeMillis() * 1_000_000L);
        out.printf(
            "decided %d requests, deleted the spans of %d; kept traces by reason: %s%n",
            o.decided(), o.deletedTraces(), o.keptByReason().isEmpty() ? "none" : o.keptByReason());
        out.printf(
            "spans %,d -> %,d, kernels %,d -> %,d; stored %s -> %s (%s per attributed request)%n",
            o.spansBefore(),
            o.spansAfter(),
            o.kernelsBefore(),
            o.kernelsAfter(),
            human(o.bytesBefore()),
            human(o.bytesAfter()),
            o.requests() == 0 ? "-" : human(o.bytesAfter() / o.requests()));
        out.flush();
        if (follow) {
          Thread.sleep(pause);
        }
      } while (follow);
    }
    return 0;
  }

  private static String human(long bytes) {
    return bytes < 10_000
        ? bytes + " B"
        : bytes < 10_000_000
            ? String.format("%.1f kB", bytes / 1e3)
            : String.format("%.1f MB", bytes / 1e6);
  }
}
