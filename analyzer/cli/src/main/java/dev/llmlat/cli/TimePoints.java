package dev.llmlat.cli;

import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;

/**
 * Parses a point in time a user gives ({@code diff --a-from}): an instant with its zone ({@code
 * 2026-12-01T10:00:00Z}, {@code 2026-12-01T11:00:00+01:00}), a date (its midnight, UTC), {@code
 * now}, or a duration as {@code --since} takes it, meaning that long ago ({@code 2h}).
 */
final class TimePoints {
  private TimePoints() {}

  /** Unix nanoseconds; {@code nowNs} is what "now" and "2h" count from. */
  static long parse(String option, String text, long nowNs) {
    String t = text.strip();
    if (t.equalsIgnoreCase("now")) {
      return nowNs;
    }
    if (!t.isEmpty() && Character.isDigit(t.charAt(0)) && t.contains("-")) {
      try {
        if (t.length() == 10) {
          return nanos(LocalDate.parse(t).atStartOfDay().toInstant(ZoneOffset.UTC));
        }
        return nanos(
            t.endsWith("Z") || t.endsWith("z")
                ? Instant.parse(t.toUpperCase(java.util.Locale.ROOT))
                : OffsetDateTime.parse(t).toInstant());
      } catch (DateTimeParseException | ArithmeticException e) {
        throw new IllegalArgumentException(
            option
                + ": not a time: '"
                + Durations.abbreviate(text)
                + "' (an instant with its zone,"
                + " e.g. 2026-12-01T10:00:00Z or 2026-12-01T11:00:00+01:00, a date, now, or a duration ago such as 2h)");
      }
    }
    try {
      return nowNs - Durations.parse(t).toNanos();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          option
              + ": not a time: '"
              + Durations.abbreviate(text)
              + "' (an instant with its zone,"
              + " e.g. 2026-12-01T10:00:00Z, a date, now, or a duration ago such as 2h)");
    }
  }

  private static long nanos(Instant i) {
    return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000_000L), i.getNano());
  }

  /** An instant for people: ISO-8601 in UTC. */
  static String format(long ns) {
    return Instant.ofEpochSecond(
            Math.floorDiv(ns, 1_000_000_000L), Math.floorMod(ns, 1_000_000_000L))
        .toString();
  }
}
