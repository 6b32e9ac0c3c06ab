package dev.llmlat.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses {@code --since} values: {@code 90s}, {@code 15m}, {@code 2h}, {@code 7d}, or ISO-8601 ({@code PT15M}). */
final class Durations {
  private static final Pattern SHORT = Pattern.compile("(\\d+)(ms|s|m|h|d)");

  private Durations() {}

  static Duration parse(String text) {
    Matcher m = SHORT.matcher(text.strip());
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
    try {
      return Duration.parse(text.strip().toUpperCase(java.util.Locale.ROOT));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("not a duration: '" + text + "' (use e.g. 90s, 15m, 2h, 7d)");
    }
  }
}
