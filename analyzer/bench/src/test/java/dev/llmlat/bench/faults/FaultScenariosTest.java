package dev.llmlat.bench.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.cli.Llmlat;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The quick variants of `llmlat bench faults`, with real processes: broker, store process and
 * ingester are child JVMs, kills are SIGKILL, the disk faults use a real tmpfs (as root) or chmod.
 */
class FaultScenariosTest {
  @TempDir Path dir;
  private final StringWriter out = new StringWriter();
  private final PrintWriter log = new PrintWriter(out, true);

  @Test
  void everySpanStoredExactlyOnceAfterThreeIngesterKills() throws Exception {
    FaultResult r;
    try (FaultRig rig = FaultRig.full(dir, 2)) {
      r = new IngesterKills(30_000, 3, 42).run(rig, log);
      assertThat(rig.ingesterStarts()).isEqualTo(4);
    }
    assertThat(r.spans()).as(out.toString()).isGreaterThanOrEqualTo(30_000);
    assertThat(r.foundOnce()).isEqualTo(r.spans());
    assertThat(r.lost()).isZero();
    assertThat(r.duplicated()).isZero();
    assertThat(r.problems()).isEmpty();
    assertThat(out.toString()).containsSubsequence("SIGKILL 1/3", "SIGKILL 2/3", "SIGKILL 3/3");
  }

  @Test
  void ingesterHoldsOneBatchWhileTheStoreIsDownThenResumes() throws Exception {
    FaultResult r;
    try (FaultRig rig = FaultRig.full(dir, 1)) {
      r = new StoreOutage(3000, Duration.ofSeconds(5), 7).run(rig, log);
    }
    assertThat(r.problems()).as(r.line()).isEmpty();
    assertThat(r.spans()).isGreaterThanOrEqualTo(3000);
    assertThat(r.foundOnce()).isEqualTo(r.spans());
    assertThat(r.lost()).isZero();
    assertThat(r.duplicated()).isZero();
    assertThat(Long.parseLong(r.figures().get("insert_retries")))
        .as("the ingester noticed the outage")
        .isPositive();
    // it kept one batch and stopped polling: the backlog stayed in Kafka
    assertThat(Long.parseLong(r.figures().get("ingester_pending_spans"))).isBetween(1L, 50_000L);
    assertThat(Long.parseLong(r.figures().get("backlog_max_records"))).isPositive();
  }

  @Test
  void fuzzedRecordsAreDeadLetteredWithAReasonOrStoredAndTheIngesterLives() throws Exception {
    FaultResult r;
    try (FaultRig rig = FaultRig.full(dir, 1)) {
      r = new FuzzedRecords(5000, 11, dir.resolve("kept")).run(rig, log);
    }
    assertThat(r.problems()).as(r.line()).isEmpty();
    assertThat(r.figures())
        .containsEntry("dlq_plus_ingested", "5000")
        .containsEntry("ingester_alive", "true");
    assertThat(r.dlq()).isBetween(1000L, 4900L); // most are garbage, the unmutated tenth decodes
    assertThat(Long.parseLong(r.figures().get("ingested_records"))).isGreaterThanOrEqualTo(400);
    assertThat(r.lost()).isZero();
    assertThat(r.duplicated()).isZero();
    assertThat(dir.resolve("kept")).doesNotExist(); // nothing failed, nothing kept
  }

  @Test
  void fuzzedRecordsAreAFunctionOfSeedAndIndex() {
    FuzzedRecords a = new FuzzedRecords(100, 5, dir);
    FuzzedRecords b = new FuzzedRecords(100, 5, dir);
    FuzzedRecords other = new FuzzedRecords(100, 6, dir);
    for (int i = 0; i < 100; i++) {
      assertThat(a.record(i)).isEqualTo(b.record(i));
    }
    assertThat(a.record(3)).isNotEqualTo(other.record(3));
  }

  @Test
  void readOnlyAndFullDataDirectoryFailClearlyAndTheStoreRecovers() throws Exception {
    FaultResult r = new DiskFaults(dir, 3, 200).run(log);
    assertThat(r.problems()).as(r.line()).isEmpty();
    assertThat(r.spans()).isEqualTo(400);
    assertThat(r.foundOnce()).isEqualTo(400);
    String data = dir.resolve("mnt").resolve("clickhouse").toString();
    assertThat(r.figures().get("read_only_error")).contains(data);
    if (DiskFaults.isRoot()) {
      assertThat(r.figures()).containsEntry("mode", "tmpfs-remount-ro+fill");
      assertThat(r.figures().get("disk_full_error"))
          .contains(data)
          .contains("No space left on device");
    }
  }

  @Test
  void theFinalLineSumsTheScenarios() {
    FaultResult a = new FaultResult("a", 10, 9, 1, 0, 2, Map.of(), List.of());
    FaultResult b = new FaultResult("b", 5, 5, 0, 3, 4, Map.of(), List.of());
    assertThat(FaultsBenchmark.total(List.of(a, b)))
        .isEqualTo("spans=15 lost=1 duplicated=3 dlq=6");
    assertThat(a.passed()).isFalse();
    assertThat(new FaultResult("c", 5, 5, 0, 0, 4, Map.of(), List.of()).passed()).isTrue();
  }

  @Test
  void badOptionsAreNamedBeforeAnythingStarts() {
    assertThat(cli("--only", "ingester-kill,nope"))
        .contains("--only: no scenario 'nope'")
        .contains("ingester-kill, store-outage, broker-restart, disk, fuzz");
    assertThat(cli("--outage", "soon")).contains("--outage: not a duration: 'soon'");
    assertThat(cli("--fuzz-records", "10")).contains("--fuzz-records must be at least 100, got 10");
    assertThat(cli("--kills", "-1")).contains("--kills must be 0..1000, got -1");
  }

  private static String cli(String... args) {
    StringWriter err = new StringWriter();
    String[] all = new String[args.length + 2];
    all[0] = "bench";
    all[1] = "faults";
    System.arraycopy(args, 0, all, 2, args.length);
    int exit = Llmlat.run(all, new PrintWriter(new StringWriter()), new PrintWriter(err, true));
    assertThat(exit).as(err.toString()).isEqualTo(Llmlat.EXIT_USAGE);
    return err.toString();
  }
}
