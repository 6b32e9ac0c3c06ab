package dev.llmlat.gpu.internal;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Microsecond decimals (Kineto's {@code ts}, {@code dur}) to integer nanoseconds, without double
 * rounding. Text that is not a decimal number is refused ({@link NumberFormatException}), and so is
 * a value whose nanoseconds do not fit a long ({@link ArithmeticException}): a wrapped value would
 * be a plausible-looking wrong time.
 */
public final class Decimals {
  /** Integer digits of microseconds that cannot overflow: 15 digits are below 10^18 ns. */
  private static final int SAFE_DIGITS = 15;

  private Decimals() {}

  /**
   * {@code text} microseconds → nanoseconds, rounded half-up (away from zero) at the nanosecond.
   *
   * @throws NumberFormatException when {@code text} is not a decimal number (empty, {@code abc},
   *     {@code 1.2.3})
   * @throws ArithmeticException when the nanoseconds do not fit a long (past year 2262 as Unix ns)
   */
  public static long microsToNanos(String text) {
    int n = text.length();
    int i = 0;
    boolean negative = false;
    if (n > 0 && (text.charAt(0) == '-' || text.charAt(0) == '+')) {
      negative = text.charAt(0) == '-';
      i = 1;
    }
    int intStart = i;
    long whole = 0;
    for (; i < n; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        break;
      }
      whole = whole * 10 + (c - '0');
    }
    int intDigits = i - intStart;
    long frac = 0;
    int fracDigits = 0;
    boolean roundUp = false;
    if (i < n && text.charAt(i) == '.') {
      for (i++; i < n; i++) {
        char c = text.charAt(i);
        if (c < '0' || c > '9') {
          break;
        }
        if (fracDigits < 3) {
          frac = frac * 10 + (c - '0');
        } else if (fracDigits == 3) {
          roundUp = c >= '5';
        }
        fracDigits++;
      }
    }
    if (intDigits == 0 && fracDigits == 0) {
      throw new NumberFormatException("not a number");
    }
    if (i < n) {
      char c = text.charAt(i);
      if (c == 'e' || c == 'E') {
        return exact(text);
      }
      throw new NumberFormatException("not a number");
    }
    if (intDigits > SAFE_DIGITS) {
      return exact(text); // may overflow: let BigDecimal tell
    }
    for (int d = Math.min(fracDigits, 3); d < 3; d++) {
      frac *= 10;
    }
    long ns = whole * 1000 + frac + (roundUp ? 1 : 0);
    return negative ? -ns : ns;
  }

  private static long exact(String text) {
    BigDecimal d = new BigDecimal(text);
    // Magnitude first: rescaling 1e999999999 (or 1e-999999999) would build a number that large.
    int magnitude = d.precision() - d.scale(); // digits before the point
    if (magnitude > 17) {
      throw new ArithmeticException("overflow");
    }
    if (magnitude < -4) {
      return 0; // below 0.0001 µs: rounds to 0 ns
    }
    return d.movePointRight(3).setScale(0, RoundingMode.HALF_UP).longValueExact();
  }

  /** {@code ns} as microseconds, exactly: {@code 1234567} → {@code 1234.567}. */
  public static String nanosAsMicros(long ns) {
    return BigDecimal.valueOf(ns, 3).stripTrailingZeros().toPlainString();
  }
}
