package dev.llmlat.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses {@code --since} values: {@code 90s}, {@code 15m}, {@code 2h}, {@code 7d}, or ISO-8601
 * ({@code PT15M}).
 */
public final class Durations {
  private static final Pattern SHORT = Pattern.compile("(\\d+)(ms|s|m|h|d)");

  private Durations() {}

  /** Longer than any span history worth querying; also keeps "now minus it" far from overflow. */
  private static final Duration MAX = Duration.ofDays(36_500);

  public static Duration parse(String text) {
    Duration d = parseUnbounded(text);
    if (d.isNegative() || d.compareTo(MAX) > 0) {
      throw new IllegalArgumentException("duration '" + text + "' is out of range (0 to 36500d)");
    }
    return d;
  }

  private static Duration parseUnbounded(String text) {
    String t = text.strip();
    Matcher m = SHORT.matcher(t);
    try {
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          case "h" -> Duration.ofHours(n);
          default -> Duration.ofDays(n);
        };
      }
      return Duration.parse(t.toUpperCase(java.util.Locale.ROOT));
    } catch (RuntimeException e) { // not a number, or too large for a Duration
      throw new IllegalArgumentException(
          "not a duration: '" + abbreviate(text) + "' (use e.g. 90s, 15m, 2h, 7d)");
    }
  }

  /** User text quoted back in a message, cut short: an argument may be arbitrarily long. */
  static String abbreviate(String text) {
    return text.length() <= 80 ? text : text.substring(0, 77) + "...";
  }
}
