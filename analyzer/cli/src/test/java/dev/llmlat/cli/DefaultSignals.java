package dev.llmlat.cli;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A prefix that starts a child with SIGINT at its default disposition, as a terminal's Ctrl-C finds
 * a command. A shell that starts a job in the background (a CI runner under {@code nohup ... &})
 * makes it ignore SIGINT, every descendant inherits that, and the JVM then takes no SIGINT handler
 * at all. GNU env resets it; where env cannot, the child inherits what this JVM has.
 */
final class DefaultSignals {
  private static final List<String> PREFIX = probe();

  private DefaultSignals() {}

  static List<String> prefix() {
    return PREFIX;
  }

  private static List<String> probe() {
    List<String> prefix = List.of("env", "--default-signal=INT");
    try {
      Process p = new ProcessBuilder(concat(prefix, "true")).redirectErrorStream(true).start();
      return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 ? prefix : List.of();
    } catch (java.io.IOException e) {
      return List.of();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return List.of();
    }
  }

  private static List<String> concat(List<String> prefix, String command) {
    List<String> all = new java.util.ArrayList<>(prefix);
    all.add(command);
    return all;
  }
}
