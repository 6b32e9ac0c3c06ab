package dev.llmlat.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.store.StoreException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class StoreRetryTest {
  private final IngestMetrics metrics = new IngestMetrics();
  private final AtomicInteger attempts = new AtomicInteger();

  /** Fails with a store error {@code failures} times, then answers. */
  Supplier<String> storeAwayFor(int failures) {
    return () -> {
      int n = attempts.incrementAndGet();
      if (n <= failures) {
        throw new StoreException("store away (attempt " + n + ")");
      }
      return "stored";
    };
  }

  @Test
  void retriesUntilTheStoreAnswersWhileRunningCountingTheRetries() {
    StoreRetry retry = new StoreRetry("test store", metrics, () -> true);
    assertThat(retry.call("insert", storeAwayFor(2))).isEqualTo("stored");
    assertThat(attempts).hasValue(3);
    assertThat(metrics.snapshot().insertRetries()).isEqualTo(2);
  }

  @Test
  void givesUpOnTheThirdFailureOnceStopping() {
    StoreRetry retry = new StoreRetry("test store", metrics, () -> false);
    assertThatThrownBy(() -> retry.call("insert", storeAwayFor(10)))
        .isInstanceOf(StoreException.class)
        .hasMessage("store away (attempt 3)");
    assertThat(attempts).hasValue(3);
    assertThat(metrics.snapshot().insertRetries()).isEqualTo(2);
  }

  @Test
  void doesNotRetryWhatIsNotAStoreError() {
    StoreRetry retry = new StoreRetry("test store", metrics, () -> true);
    assertThatThrownBy(
            () ->
                retry.run(
                    "insert",
                    () -> {
                      attempts.incrementAndGet();
                      throw new IllegalArgumentException("a bug, not an outage");
                    }))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(attempts).hasValue(1);
    assertThat(metrics.snapshot().insertRetries()).isZero();
  }
}
