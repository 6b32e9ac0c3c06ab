package dev.llmlat.testing;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Polls a condition of a system under test until it holds or the time is up (then fails naming it). */
public final class Await {
  private Await() {}

  public static void until(BooleanSupplier condition, String what) throws InterruptedException {
    until(condition, what, 60);
  }

  public static void until(BooleanSupplier condition, String what, int seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + seconds + " s waiting for " + what);
      }
      Thread.sleep(50);
    }
  }
}
