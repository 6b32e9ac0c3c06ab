package dev.llmlat.load;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte counts as people write them: {@code 16MiB}, {@code 512k}, {@code 1048576}. Units are binary
 * (KiB = 1024 bytes).
 */
public final class ByteSize {
  private static final Pattern SIZE =
      Pattern.compile("(\\d{1,19})\\s*(b|bytes?|k|kib|m|mib|g|gib)?");

  private ByteSize() {}

  /**
   * The bytes {@code text} names.
   *
   * @throws IllegalArgumentException naming the text and the option
   */
  public static long parse(String option, String text) {
    Matcher m = SIZE.matcher(text == null ? "" : text.strip().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new IllegalArgumentException(
          option + " takes a size such as 16MiB, 512KiB or 4096 (bytes), not '" + text + "'");
    }
    int shift =
        switch (m.group(2) == null ? "" : m.group(2).substring(0, 1)) {
          case "k" -> 10;
          case "m" -> 20;
          case "g" -> 30;
          default -> 0;
        };
    try {
      long n = Long.parseLong(m.group(1));
      if (n > Long.MAX_VALUE >> shift) {
        throw new NumberFormatException();
      }
      return n << shift;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " '" + text + "' is too large", e);
    }
  }

  /** {@code bytes} in the largest unit that divides it: {@code 16 MiB}, {@code 1536 bytes}. */
  public static String describe(long bytes) {
    String[] units = {"GiB", "MiB", "KiB"};
    for (int i = 0; i < units.length; i++) {
      long unit = 1L << (10 * (3 - i));
      if (bytes >= unit && bytes % unit == 0) {
        return bytes / unit + " " + units[i];
      }
    }
    return bytes + (bytes == 1 ? " byte" : " bytes");
  }
}
