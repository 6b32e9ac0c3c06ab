package dev.llmlat.attribution.engines;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as Rust's {@code Debug} of {@code std::time::Duration} writes them (TGI records its
 * timings so): a decimal number and a unit, {@code s}, {@code ms}, {@code µs} or {@code ns}, the
 * fraction exact (no rounding), e.g. {@code 12.3ms}, {@code 1.5µs}, {@code 61.000000001s}.
 */
final class RustDurations {
  /** A duration's text; request rules match it in SQL too (RE2 and Java read it alike). */
  static final String REGEX = "(\\d+)(?:\\.(\\d{1,9}))?(ns|µs|us|ms|s)";

  private static final Pattern DURATION = Pattern.compile(REGEX);

  private RustDurations() {}

  /** The duration in ns, or -1 when {@code text} is not one. */
  static long parseNs(String text) {
    Matcher m = DURATION.matcher(text.strip());
    if (!m.matches()) {
      return -1;
    }
    long unit =
        switch (m.group(3)) {
          case "s" -> 1_000_000_000L;
          case "ms" -> 1_000_000L;
          case "µs", "us" -> 1_000L;
          default -> 1L;
        };
    try {
      long whole = Math.multiplyExact(Long.parseLong(m.group(1)), unit);
      String fraction = m.group(2);
      if (fraction == null) {
        return whole;
      }
      // exact decimal: fraction digits scaled to the unit
      long digits = Long.parseLong(fraction);
      long scale = (long) Math.pow(10, fraction.length());
      return Math.addExact(whole, Math.round(digits * (double) unit / scale));
    } catch (ArithmeticException | NumberFormatException e) {
      return -1;
    }
  }
}
