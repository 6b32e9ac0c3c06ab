package dev.llmlat.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Polls a condition of a system under test until it holds or the time is up (then fails naming it).
 * The time is a guard against a hang, never the assertion: give it generously.
 */
public final class Await {
  private Await() {}

  public static void until(BooleanSupplier condition, String what) throws InterruptedException {
    until(condition, what, 60);
  }

  public static void until(BooleanSupplier condition, String what, int seconds)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + seconds + " s waiting for " + what);
      }
      Thread.sleep(50);
    }
  }

  /**
   * Waits until the output {@code process} writes to {@code log} has a match of {@code pattern},
   * and returns the first; fails with that output where the process ends first or the time is up.
   */
  public static MatchResult logged(Process process, Path log, Pattern pattern, int seconds)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (true) {
      boolean ended =
          !process.isAlive(); // before reading: what it wrote before it ended is read below
      Matcher m = pattern.matcher(read(log));
      if (m.find()) {
        return m.toMatchResult();
      }
      if (ended) {
        throw new AssertionError(
            "the process ended (exit "
                + process.exitValue()
                + ") before its output matched "
                + pattern
                + "; its output:\n"
                + read(log));
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out after "
                + seconds
                + " s waiting for output matching "
                + pattern
                + "; the output:\n"
                + read(log));
      }
      Thread.sleep(50);
    }
  }

  private static String read(Path log) {
    try {
      return new String(
          Files.readAllBytes(log), StandardCharsets.UTF_8); // a line half written is no failure
    } catch (NoSuchFileException e) {
      return "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
