package dev.llmlat.analyze.engines;

import dev.llmlat.analyze.SpanRecord;

/** Attribute reading shared by the adapters. */
final class Attrs {
  private Attrs() {}

  /** The first non-empty value among {@code keys}, or "". */
  static String first(SpanRecord s, String... keys) {
    for (String k : keys) {
      String v = s.attr(k);
      if (!v.isEmpty()) {
        return v;
      }
    }
    return "";
  }

  /** A duration in seconds (a double attribute) as ns, or -1 when absent or not a number. */
  static long seconds(SpanRecord s, String key) {
    double v = s.doubleAttr(key, Double.NaN);
    return Double.isNaN(v) || v < 0 || Double.isInfinite(v) ? -1 : Math.round(v * 1e9);
  }
}
