package dev.llmlat.services;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskSpaceTest {
  @TempDir Path dir;

  @Test
  void chDbsNotEnoughSpaceNamesTheDataDirItWasWriting() {
    Path data = dir.resolve("data");
    Path logs = dir.resolve("logs");
    RuntimeException chdb =
        new RuntimeException(
            "insert failed",
            new IllegalStateException(
                "Code: 243. DB::Exception: Cannot reserve 1.00 MiB, not enough space. (NOT_ENOUGH_SPACE) (version 26.5.1.1)"));
    DiskSpace.Full full = DiskSpace.explain(chdb, List.of(logs, data));
    assertThat(full).isNotNull();
    assertThat(full.getMessage())
        .startsWith("no space left on device under " + logs)
        .contains("free")
        .contains("Cannot reserve 1.00 MiB");
    RuntimeException write =
        new RuntimeException(
            "Cannot write to file "
                + data
                + "/store/abc/tmp_insert_all_1_1_0/data.bin,"
                + " errno: 28, strerror: No space left on device");
    assertThat(DiskSpace.explain(write, List.of(logs, data)).dir()).isEqualTo(data);
    assertThat(DiskSpace.explain(new RuntimeException("Code: 60. Unknown table"), List.of(data)))
        .isNull();
  }

  @Test
  void aCommandIsRefusedBelowItsNeedNamingThePathAndTheFreeBytes() {
    Path notYetMade = dir.resolve("home/data/clickhouse");
    assertThatThrownBy(() -> DiskSpace.require(List.of(notYetMade), Long.MAX_VALUE - 1, "the demo"))
        .isInstanceOf(DiskSpace.Full.class)
        .hasMessageStartingWith("no space left on device under " + notYetMade + ": ")
        .hasMessageContaining(" bytes) free, the demo needs at least ");
    DiskSpace.require(List.of(notYetMade), 1, "the demo");
  }

  @Test
  void theWatchTellsOnceWhenACheckFindsTheDiskFull() throws InterruptedException {
    AtomicInteger tells = new AtomicInteger();
    CountDownLatch told = new CountDownLatch(1);
    DiskSpace.Full broker =
        new DiskSpace.Full(dir, "0 bytes free; the Kafka broker (pid 1) stopped");
    AtomicBoolean dead = new AtomicBoolean();
    CountDownLatch lookedWhileAlive = new CountDownLatch(3);
    Supplier<DiskSpace.Full> brokerCheck =
        () -> {
          if (dead.get()) {
            return broker;
          }
          lookedWhileAlive.countDown();
          return null;
        };
    // the latches' timeouts only guard against a hang
    try (DiskWatch watch =
        DiskWatch.start(
            List.of(dir),
            List.of(brokerCheck),
            Duration.ofMillis(20),
            full -> {
              tells.incrementAndGet();
              told.countDown();
            })) {
      assertThat(lookedWhileAlive.await(60, TimeUnit.SECONDS))
          .as("three looks while the broker lives")
          .isTrue();
      assertThat(watch.full()).isNull();
      assertThat(tells).hasValue(0);
      dead.set(true);
      assertThat(told.await(60, TimeUnit.SECONDS)).isTrue();
      assertThat(watch.full()).isSameAs(broker);
      assertThat(watch.explain(new RuntimeException("timeout"))).isSameAs(broker);
    }
    assertThat(tells).as("told once").hasValue(1);
  }
}
