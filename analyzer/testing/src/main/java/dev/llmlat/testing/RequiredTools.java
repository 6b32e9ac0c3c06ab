package dev.llmlat.testing;

import org.junit.jupiter.api.Assumptions;

/**
 * Tools that the project's own scripts install ({@code scripts/test}: Node.js with npm, Chromium).
 * A test that needs one skips where it is missing, saying why; in CI (the environment variable
 * {@code CI} is {@code true}) or with {@code -Dllmlat.requireTools=true} it fails with the same
 * message instead, so that a missing tool cannot make a test vanish from CI unnoticed. Hardware and
 * privileges CI lacks (GPUs, root, bpftrace's kernel) stay plain assumptions.
 */
public final class RequiredTools {
  private RequiredTools() {}

  /** Whether a missing tool fails the test rather than skipping it. */
  public static boolean required() {
    return "true".equalsIgnoreCase(System.getenv("CI"))
        || Boolean.getBoolean("llmlat.requireTools");
  }

  /**
   * Returns where {@code present}; otherwise skips the test, or fails it where tools are required,
   * with {@code why}.
   */
  public static void require(boolean present, String why) {
    if (present) {
      return;
    }
    if (required()) {
      throw new AssertionError(why);
    }
    Assumptions.abort(why);
  }
}
