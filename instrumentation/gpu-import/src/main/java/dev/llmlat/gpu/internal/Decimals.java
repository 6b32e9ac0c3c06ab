package dev.llmlat.gpu.internal;

import java.math.BigDecimal;
import java.math.RoundingMode;

/** Microsecond decimals (Kineto's {@code ts}, {@code dur}) to integer nanoseconds, without double rounding. */
public final class Decimals {
  private Decimals() {}

  /** {@code text} microseconds → nanoseconds, rounded half-up at the nanosecond. */
  public static long microsToNanos(String text) {
    int n = text.length();
    int dot = -1;
    for (int i = 0; i < n; i++) {
      char c = text.charAt(i);
      if (c == '.') {
        dot = i;
      } else if (c == 'e' || c == 'E') {
        return new BigDecimal(text).movePointRight(3).setScale(0, RoundingMode.HALF_UP).longValueExact();
      }
    }
    boolean negative = text.charAt(0) == '-';
    int from = negative ? 1 : 0;
    int intEnd = dot < 0 ? n : dot;
    long whole = 0;
    for (int i = from; i < intEnd; i++) {
      whole = whole * 10 + (text.charAt(i) - '0');
    }
    long frac = 0;
    int digits = 0;
    boolean roundUp = false;
    if (dot >= 0) {
      for (int i = dot + 1; i < n; i++) {
        int d = text.charAt(i) - '0';
        if (digits < 3) {
          frac = frac * 10 + d;
          digits++;
        } else {
          roundUp = d >= 5;
          break;
        }
      }
    }
    while (digits < 3) {
      frac *= 10;
      digits++;
    }
    long ns = whole * 1000 + frac + (roundUp ? 1 : 0);
    return negative ? -ns : ns;
  }
}
