package dev.llmlat.services;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Watches free space under a command's directories while it runs (and any other sign of a full
 * disk, such as our broker having died of one), and tells the command at once: its writers only
 * find out after their own timeouts, minutes later, in words that do not say the disk is full.
 */
public final class DiskWatch implements AutoCloseable {
  private final List<Path> dirs;
  private final List<Supplier<DiskSpace.Full>> checks;
  private final Duration period;
  private final Consumer<DiskSpace.Full> onFull;
  private final Thread thread;
  private volatile DiskSpace.Full full;
  private volatile boolean closed;

  private DiskWatch(
      List<Path> dirs,
      List<Supplier<DiskSpace.Full>> checks,
      Duration period,
      Consumer<DiskSpace.Full> onFull) {
    this.dirs = List.copyOf(dirs);
    this.checks = List.copyOf(checks);
    this.period = period;
    this.onFull = onFull;
    this.thread = new Thread(this::run, "llmlat-disk-watch");
    thread.setDaemon(true);
  }

  /**
   * Checks {@code dirs} (below {@link DiskSpace#RUNNING_MIN_FREE}) and {@code checks} every {@code
   * period}; the first finding is kept ({@link #full()}) and handed to {@code onFull} once.
   */
  public static DiskWatch start(
      List<Path> dirs,
      List<Supplier<DiskSpace.Full>> checks,
      Duration period,
      Consumer<DiskSpace.Full> onFull) {
    DiskWatch watch = new DiskWatch(dirs, checks, period, onFull);
    watch.thread.start();
    return watch;
  }

  /** What the watch found, or null while the disks have room. */
  public DiskSpace.Full full() {
    return full;
  }

  /** The directories watched. */
  public List<Path> dirs() {
    return dirs;
  }

  /**
   * A failure of the command as the full disk it is, if it is one: the watch's finding, or what
   * {@code e} says of a full disk (naming the watched directory its message names); else null.
   */
  public DiskSpace.Full explain(Throwable e) {
    DiskSpace.Full found = check();
    return found != null ? found : DiskSpace.explain(e, dirs);
  }

  /** Looks now (also after the watch found something, for the caller's own last look). */
  public DiskSpace.Full check() {
    if (full != null) {
      return full;
    }
    DiskSpace.Full f = DiskSpace.below(dirs, DiskSpace.RUNNING_MIN_FREE);
    for (int i = 0; f == null && i < checks.size(); i++) {
      f = checks.get(i).get();
    }
    return f;
  }

  private void run() {
    while (!closed) {
      DiskSpace.Full f;
      try {
        f = check();
      } catch (RuntimeException e) {
        f = null; // a check that cannot look this time looks again next time
      }
      if (f != null) {
        full = f;
        if (!closed) {
          onFull.accept(f);
        }
        return;
      }
      try {
        Thread.sleep(period.toMillis());
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
    try {
      thread.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The directories of {@code paths} without repeats of one file system's same place. */
  public static List<Path> distinct(List<Path> paths) {
    List<Path> out = new ArrayList<>();
    for (Path p : paths) {
      Path a = p.toAbsolutePath().normalize();
      if (!out.contains(a)) {
        out.add(a);
      }
    }
    return out;
  }
}
