package dev.llmlat.ingest.imports;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Named points where a party of an import stops until the test lets it go on; points not armed
 * pass.
 */
final class Gates {
  private final Map<String, Gate> armed = new ConcurrentHashMap<>();

  Gate arm(String name) {
    Gate g = new Gate(name);
    armed.put(name, g);
    return g;
  }

  /** An armed point that does not stop: it only tells when it was reached. */
  Gate watch(String name) {
    Gate g = arm(name);
    g.open();
    return g;
  }

  void pass(String name) {
    Gate g = armed.get(name);
    if (g != null) {
      g.stop();
    }
  }

  void clear() {
    armed.values().forEach(Gate::open); // nobody stays stopped after a failed test
    armed.clear();
  }

  static final class Gate {
    private final String name;
    private final CountDownLatch arrived = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    Gate(String name) {
      this.name = name;
    }

    void stop() {
      arrived.countDown();
      try {
        if (!released.await(120, TimeUnit.SECONDS)) {
          throw new IllegalStateException("gate '" + name + "' was never opened");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }

    void awaitArrival() throws InterruptedException {
      assertThat(arrived.await(60, TimeUnit.SECONDS)).as("a party reached '" + name + "'").isTrue();
    }

    void open() {
      released.countDown();
    }
  }
}
