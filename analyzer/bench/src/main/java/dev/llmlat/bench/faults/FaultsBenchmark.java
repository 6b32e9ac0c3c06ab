package dev.llmlat.bench.faults;

import dev.llmlat.services.ChildJvm;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Runs the fault scenarios ({@code llmlat bench faults}), each on its own real broker, store and
 * ingester processes under the scratch directory; prints one line per scenario and the total {@code
 * spans=N lost=N duplicated=N dlq=N}.
 */
public final class FaultsBenchmark {
  public static final List<String> SCENARIOS =
      List.of(
          IngesterKills.NAME,
          StoreOutage.NAME,
          BrokerRestart.NAME,
          DiskFaults.NAME,
          FuzzedRecords.NAME);

  private final FaultsConfig config;

  public FaultsBenchmark(FaultsConfig config) {
    this.config = config;
  }

  /** All results, in order; the last line printed is the total. */
  public List<FaultResult> run(PrintWriter out) throws IOException, InterruptedException {
    out.printf("faults: seed %d, scratch %s%n", config.seed(), config.scratch());
    out.flush();
    Files.createDirectories(config.scratch());
    List<FaultResult> results = new ArrayList<>();
    boolean keepScratch = true;
    try {
      for (String name : SCENARIOS) {
        if (!config.runs(name)) {
          continue;
        }
        FaultResult r;
        try {
          r = run(name, config.scratch().resolve(name), out);
        } catch (RuntimeException e) {
          // one scenario's rig failing (a broker that would not start) must not hide the others'
          // results
          r =
              new FaultResult(
                  name, 0, 0, 0, 0, 0, Map.of(), List.of("did not complete: " + e.getMessage()));
        }
        results.add(r);
        out.println(r.line());
        out.flush();
      }
      keepScratch = !results.stream().allMatch(FaultResult::passed);
    } finally {
      if (!keepScratch) {
        ChildJvm.deleteRecursively(config.scratch());
      } else {
        out.println("kept for inspection (logs, failing fuzz records): " + config.scratch());
      }
    }
    out.println(total(results));
    out.flush();
    return results;
  }

  private FaultResult run(String name, Path dir, PrintWriter out)
      throws IOException, InterruptedException {
    long seed = config.seed();
    return switch (name) {
      case IngesterKills.NAME -> {
        try (FaultRig rig = FaultRig.full(dir, 2)) {
          yield new IngesterKills(config.spans(), config.kills(), seed).run(rig, out);
        }
      }
      case StoreOutage.NAME -> {
        try (FaultRig rig = FaultRig.full(dir, 1)) {
          yield new StoreOutage(Math.max(1000, config.spans() / 10), config.outage(), seed)
              .run(rig, out);
        }
      }
      case BrokerRestart.NAME -> {
        try (FaultRig rig = FaultRig.withBroker(dir, 1)) {
          Duration phase =
              Duration.ofSeconds(Math.max(3, Math.min(10, config.outage().toSeconds())));
          yield new BrokerRestart(config.outage(), phase, seed).run(rig, out);
        }
      }
      case DiskFaults.NAME ->
          new DiskFaults(dir, seed, Math.max(100, Math.min(20_000, config.spans() / 50))).run(out);
      case FuzzedRecords.NAME -> {
        try (FaultRig rig = FaultRig.full(dir, 1)) {
          yield new FuzzedRecords(
                  config.fuzzRecords(), seed, config.scratch().resolve("fuzz-failures"))
              .run(rig, out);
        }
      }
      default -> throw new IllegalArgumentException("no scenario " + name);
    };
  }

  /** The final line. */
  public static String total(List<FaultResult> results) {
    return String.format(
        "spans=%d lost=%d duplicated=%d dlq=%d",
        results.stream().mapToLong(FaultResult::spans).sum(),
        results.stream().mapToLong(FaultResult::lost).sum(),
        results.stream().mapToLong(FaultResult::duplicated).sum(),
        results.stream().mapToLong(FaultResult::dlq).sum());
  }
}
