package dev.llmlat.services;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Free space under the directories a command writes (the store's data, the broker's log, the logs),
 * and the failures that mean a full disk, as one message: "no space left on device under DIR". A
 * full disk otherwise shows as whatever the writer says: chDB's NOT_ENOUGH_SPACE, a broker that
 * died mid-write, producers timing out.
 */
public final class DiskSpace {
  /** Below this, a command that is about to write starts nothing. */
  public static final long START_MIN_FREE = 256L << 20;

  /**
   * Below this while running, writes are about to fail (chDB reserves space for parts and merges).
   */
  public static final long RUNNING_MIN_FREE = 16L << 20;

  // chDB / ClickHouse (code 243 NOT_ENOUGH_SPACE, "Cannot reserve ..."), the OS (ENOSPC), Kafka's
  // log writes
  private static final Pattern NO_SPACE =
      Pattern.compile(
          "No space left on device|NOT_ENOUGH_SPACE|Cannot reserve [^,]*, not enough space|Code: 243\\b|KafkaStorageException"
              + "|Disk error when trying to access log file|all log dirs? .* ha(?:s|ve) failed",
          Pattern.CASE_INSENSITIVE);
  private static final Pattern PATH_IN_MESSAGE = Pattern.compile("(/[^\\s:'\"(),]+)");

  /** A full disk, said in one line naming the directory and what is free there. */
  public static final class Full extends IllegalStateException {
    private final Path dir;

    public Full(Path dir, String detail) {
      super("no space left on device under " + dir + (detail.isEmpty() ? "" : ": " + detail));
      this.dir = dir;
    }

    public Path dir() {
      return dir;
    }
  }

  private DiskSpace() {}

  /**
   * Bytes free to this process on the file system holding {@code dir} (its nearest existing
   * ancestor).
   */
  public static long usable(Path dir) {
    for (Path p = dir.toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.exists(p)) {
        try {
          return Files.getFileStore(p).getUsableSpace();
        } catch (IOException e) {
          return Long.MAX_VALUE; // cannot tell: let the writes say it
        }
      }
    }
    return Long.MAX_VALUE;
  }

  /**
   * Refuses with {@link Full} unless each of {@code dirs} has {@code minFree} bytes free; {@code
   * what} is who needs them.
   */
  public static void require(List<Path> dirs, long minFree, String what) {
    for (Path dir : dirs) {
      long free = usable(dir);
      if (free < minFree) {
        throw new Full(
            dir.toAbsolutePath(),
            bytes(free)
                + " free, "
                + what
                + " needs at least "
                + bytes(minFree)
                + " there (free some space, or point LLMLAT_HOME / --data-dir at another disk)");
      }
    }
  }

  /**
   * The first of {@code dirs} with less than {@code minFree} bytes free, as a {@link Full}; else
   * null.
   */
  public static Full below(List<Path> dirs, long minFree) {
    for (Path dir : dirs) {
      long free = usable(dir);
      if (free < minFree) {
        return new Full(dir.toAbsolutePath(), bytes(free) + " free");
      }
    }
    return null;
  }

  /**
   * Whether {@code e} or one of its causes says a disk is full (chDB, the OS, the Kafka broker).
   */
  public static boolean saysNoSpace(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getMessage() != null && NO_SPACE.matcher(t.getMessage()).find()) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  /**
   * {@code e} as a {@link Full} when it says a disk is full, naming the one of {@code dirs} the
   * message names (or the first with least space); null when it says no such thing.
   */
  public static Full explain(Throwable e, List<Path> dirs) {
    if (e instanceof Full full) {
      return full;
    }
    if (!saysNoSpace(e) || dirs.isEmpty()) {
      return null;
    }
    Path dir = named(e, dirs);
    if (dir == null) {
      dir = dirs.stream().min(java.util.Comparator.comparingLong(DiskSpace::usable)).orElseThrow();
    }
    return new Full(dir.toAbsolutePath(), bytes(usable(dir)) + " free (" + firstLine(e) + ")");
  }

  /** The one of {@code dirs} a path in the message lies under, if any. */
  private static Path named(Throwable e, List<Path> dirs) {
    for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
      if (t.getMessage() == null) {
        continue;
      }
      Matcher m = PATH_IN_MESSAGE.matcher(t.getMessage());
      while (m.find()) {
        Path p = Path.of(m.group(1)).toAbsolutePath().normalize();
        for (Path dir : dirs) {
          if (p.startsWith(dir.toAbsolutePath().normalize())) {
            return dir;
          }
        }
      }
    }
    return null;
  }

  private static String firstLine(Throwable e) {
    for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
      if (t.getMessage() != null && NO_SPACE.matcher(t.getMessage()).find()) {
        String line =
            t.getMessage()
                .lines()
                .filter(l -> NO_SPACE.matcher(l).find())
                .findFirst()
                .orElse("")
                .strip();
        return line.length() > 200 ? line.substring(0, 200) + "…" : line;
      }
    }
    return String.valueOf(e.getMessage());
  }

  /** Bytes for people: "61.2 MiB (64172032 bytes)". */
  public static String bytes(long n) {
    if (n == Long.MAX_VALUE) {
      return "unknown";
    }
    if (n < 1024) {
      return n + " bytes";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    double v = n;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(Locale.ROOT, "%.1f %s (%d bytes)", v, units[u], n);
  }
}
