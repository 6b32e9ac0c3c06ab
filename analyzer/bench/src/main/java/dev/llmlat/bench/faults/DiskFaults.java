package dev.llmlat.bench.faults;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The embedded store's data directory read-only, then full, under {@code llmlat import --to store}:
 * each write must fail with a message naming the directory, leave the store as it was (it opens,
 * its counts are right), and succeed again once the directory is writable and has room. As root the
 * directory sits on a small tmpfs that is remounted read-only and filled up; otherwise only the
 * read-only case runs (chmod), and the result says so.
 */
final class DiskFaults {
  static final String NAME = "disk";
  private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(3);

  private final Path dir;
  private final long seed;
  private final int spansPerImport;

  DiskFaults(Path dir, long seed, int spansPerImport) {
    this.dir = dir;
    this.seed = seed;
    this.spansPerImport = spansPerImport;
  }

  FaultResult run(PrintWriter log) throws IOException, InterruptedException {
    Path disk = dir.resolve("mnt");
    Files.createDirectories(disk);
    boolean root = isRoot();
    boolean mounted =
        root && sh("mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", disk.toString()) == 0;
    Path data = disk.resolve("clickhouse");
    List<String> problems = new ArrayList<>();
    Map<String, String> figures = new LinkedHashMap<>();
    figures.put(
        "mode",
        mounted
            ? "tmpfs-remount-ro+fill"
            : root ? "not-run(root-without-mount)" : "chmod-ro-only(not-root)");
    try {
      if (root && !mounted) {
        problems.add(
            "running as root but could not mount a tmpfs: chmod does not stop root, nothing tested");
        return new FaultResult(NAME, 0, 0, 0, 0, 0, figures, problems);
      }
      Random random = new Random(seed);
      Path first = dir.resolve("first.otlp.json");
      Path second = dir.resolve("second.otlp.json");
      int traces = Math.max(1, spansPerImport / 10);
      OtlpJsonFile.write(first, traces, 10, random);
      OtlpJsonFile.write(second, traces, 10, random);
      long perImport = traces * 10L;

      expectOk(importFile(first, data), "the first import", problems);

      // 1. read-only
      if (mounted) {
        check(sh("mount", "-o", "remount,ro", disk.toString()), "remount read-only");
      } else {
        check(sh("chmod", "-R", "a-w", data.toString()), "chmod read-only");
      }
      CliRun readOnly = importFile(second, data);
      expectClearFailure(readOnly, data, "read-only", problems);
      figures.put("read_only_error", quote(readOnly.message()));
      if (mounted) {
        check(sh("mount", "-o", "remount,rw", disk.toString()), "remount read-write");
      } else {
        check(sh("chmod", "-R", "u+w", data.toString()), "chmod writable");
      }

      // 2. full
      Path filler = disk.resolve("filler");
      if (mounted) {
        fill(filler);
        CliRun full = importFile(second, data);
        expectClearFailure(full, data, "disk full", problems);
        figures.put("disk_full_error", quote(full.message()));
        Files.delete(filler);
      }

      // 3. no corruption: the store opens and holds exactly the first import; then the second goes
      // in
      FaultRig.StoredSpans afterFaults = counts(data, problems);
      if (afterFaults.rows() != perImport || afterFaults.distinct() != perImport) {
        problems.add(
            "after the faults the store holds "
                + afterFaults.rows()
                + " rows ("
                + afterFaults.distinct()
                + " distinct), expected "
                + perImport);
      }
      long t0 = System.nanoTime();
      expectOk(
          importFile(second, data), "the import once the directory was writable again", problems);
      figures.put("recovered_import_s", String.format("%.1f", (System.nanoTime() - t0) / 1e9));
      log.printf("  %s: data directory %s (%s)%n", NAME, data, figures.get("mode"));
      log.flush();
      return counts(data, problems).result(NAME, 2 * perImport, 0, figures, problems);
    } finally {
      if (mounted) {
        sh("umount", "-l", disk.toString());
      } else if (Files.exists(data)) {
        sh("chmod", "-R", "u+w", data.toString());
      }
    }
  }

  private CliRun importFile(Path file, Path data) throws IOException, InterruptedException {
    return CliRun.run(
        List.of(
            "import", "otlp-json", file.toString(), "--to", "store", "--data-dir", data.toString()),
        dir.resolve("import.log"),
        COMMAND_TIMEOUT);
  }

  /** What otel_traces holds, read by opening the store in a process of its own. */
  private FaultRig.StoredSpans counts(Path data, List<String> problems)
      throws IOException, InterruptedException {
    CliRun sql =
        CliRun.run(
            List.of(
                "sql", "--data-dir", data.toString(), "--format", "tsv", FaultRig.STORED_SPANS_SQL),
            dir.resolve("sql.log"),
            COMMAND_TIMEOUT);
    List<String> lines = sql.output().lines().filter(l -> l.matches("\\d+\\t\\d+\\t\\d+")).toList();
    if (sql.exit() != 0 || lines.isEmpty()) {
      problems.add("the store did not open after the faults: " + sql.message());
      return new FaultRig.StoredSpans(0, 0, 0);
    }
    String[] v = lines.getLast().split("\t");
    return new FaultRig.StoredSpans(
        Long.parseLong(v[0]), Long.parseLong(v[1]), Long.parseLong(v[2]));
  }

  private static void expectOk(CliRun run, String what, List<String> problems) {
    if (run.exit() != 0) {
      problems.add(what + " failed (exit " + run.exit() + "): " + run.message());
    }
  }

  private static void expectClearFailure(
      CliRun run, Path data, String fault, List<String> problems) {
    if (run.exit() == 0) {
      problems.add("the import succeeded on a " + fault + " data directory");
    } else if (run.exit() != 1 || !run.output().contains(data.toString())) {
      problems.add(
          "the "
              + fault
              + " error (exit "
              + run.exit()
              + ") does not name "
              + data
              + ": "
              + run.message());
    }
  }

  /** Writes until the file system refuses: ENOSPC. */
  private static void fill(Path filler) throws IOException {
    byte[] block = new byte[1 << 20];
    try (OutputStream out = Files.newOutputStream(filler)) {
      while (true) {
        out.write(block);
      }
    } catch (IOException full) {
      // the disk is full now
    }
  }

  private static String quote(String s) {
    return "\"" + s.replace("\"", "'") + "\"";
  }

  static boolean isRoot() {
    try {
      return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
    } catch (IOException | UnsupportedOperationException e) {
      return false;
    }
  }

  private static int sh(String... command) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return -1;
    }
    return p.exitValue();
  }

  private static void check(int exit, String what) {
    if (exit != 0) {
      throw new IllegalStateException(what + " failed (exit " + exit + ")");
    }
  }
}
