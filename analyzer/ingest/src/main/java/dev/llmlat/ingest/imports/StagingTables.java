package dev.llmlat.ingest.imports;

import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.StoreException;
import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An import's staging tables ({@code <table>_import_<pid>_<n>}): rows wait there until the import
 * commits. Each names its owner (host, pid, the process's start) in the table comment, so one left
 * by a killed import is recognised and dropped later, and one of a running import is not.
 */
public final class StagingTables {
  private static final Pattern NAME =
      Pattern.compile("(?:otel_traces|gpu_kernels)_import_(\\d+)_\\d+");
  private static final Pattern OWNER =
      Pattern.compile(
          "llmlat import staging host=(\\S+) pid=(\\d+) started=(-?\\d+) created=(\\d+)");
  // A table of another host's import: its process cannot be checked from here, so only age tells.
  private static final Duration OTHER_HOST_GRACE = Duration.ofHours(24);

  private StagingTables() {}

  /** Who created a staging table. {@code started} is the process's start (epoch ms, -1 unknown). */
  record Owner(String host, long pid, long started, long created) {
    static Owner self() {
      ProcessHandle me = ProcessHandle.current();
      return new Owner(thisHost(), me.pid(), startOf(me), System.currentTimeMillis());
    }

    String comment() {
      return "llmlat import staging host="
          + host
          + " pid="
          + pid
          + " started="
          + started
          + " created="
          + created;
    }

    static Optional<Owner> parse(String comment) {
      Matcher m = OWNER.matcher(comment);
      return m.matches()
          ? Optional.of(
              new Owner(
                  m.group(1),
                  Long.parseLong(m.group(2)),
                  Long.parseLong(m.group(3)),
                  Long.parseLong(m.group(4))))
          : Optional.empty();
    }

    /** Whether the import that made the table can still be running. */
    boolean mayBeRunning(Instant now) {
      if (!host.equals(thisHost())) {
        return now.toEpochMilli() - created < OTHER_HOST_GRACE.toMillis();
      }
      // pids are reused: the same pid with another start time is another process
      return ProcessHandle.of(pid)
          .filter(p -> started < 0 || startOf(p) < 0 || startOf(p) == started)
          .isPresent();
    }
  }

  /** Creates an empty staging table with {@code table}'s columns; returns its name. */
  static String create(ClickHouseStore store, String table, Owner owner) {
    String name = table + "_import_" + owner.pid() + "_" + System.nanoTime();
    // Unsorted and unpartitioned: rows only pass through, and an export spanning many days must not
    // hit the per-insert partition limit here.
    store.execute(
        "CREATE TABLE "
            + name
            + " AS "
            + table
            + " ENGINE = MergeTree PARTITION BY tuple() PRIMARY KEY tuple()"
            + " ORDER BY tuple() COMMENT '"
            + owner.comment()
            + "'");
    return name;
  }

  static void drop(ClickHouseStore store, String name) {
    store.execute("DROP TABLE IF EXISTS " + name);
  }

  /**
   * Drops the staging tables of imports that can no longer be running (killed or crashed before
   * their commit dropped them) and says so in one line; returns their names.
   */
  public static List<String> dropOrphans(ClickHouseStore store, Consumer<String> say) {
    List<String> dropped = new ArrayList<>();
    Instant now = Instant.now();
    for (List<String> row :
        store
            .query(
                "SELECT name, comment FROM system.tables WHERE database = currentDatabase()"
                    + " AND match(name, '^(otel_traces|gpu_kernels)_import_[0-9]+_[0-9]+$') ORDER BY name")
            .rows()) {
      Matcher name = NAME.matcher(row.get(0));
      if (!name.matches()) {
        continue;
      }
      // tables made before owners were recorded name only the pid; they were made on this host
      Owner owner =
          Owner.parse(row.get(1))
              .orElse(new Owner(thisHost(), Long.parseLong(name.group(1)), -1, 0));
      if (!owner.mayBeRunning(now)) {
        try {
          drop(store, row.get(0));
          dropped.add(row.get(0));
        } catch (StoreException e) {
          // housekeeping: the next store-opening run tries again; this one goes on
          say.accept(
              "could not drop staging table "
                  + row.get(0)
                  + " left by an interrupted import: "
                  + e.getMessage().lines().findFirst().orElse(""));
        }
      }
    }
    if (!dropped.isEmpty()) {
      say.accept(
          "dropped "
              + dropped.size()
              + " staging table"
              + (dropped.size() == 1 ? "" : "s")
              + " left by interrupted imports: "
              + String.join(", ", dropped));
    }
    return dropped;
  }

  private static long startOf(ProcessHandle p) {
    return p.info().startInstant().map(Instant::toEpochMilli).orElse(-1L);
  }

  private static String thisHost() {
    return Host.NAME;
  }

  /** Looked up once: the lookup may ask the resolver. */
  private static final class Host {
    static final String NAME = lookup();

    private static String lookup() {
      try {
        return InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9._-]", "_");
      } catch (java.io.IOException e) {
        return "unknown-host";
      }
    }
  }
}
