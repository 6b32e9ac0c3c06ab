package dev.llmlat.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Larger Nsight exports made from a real tensor-parallel one (one process per rank, each driving
 * its GPU), for the benchmarks: {@code ranks} rank processes, rank {@code r} a copy of the source's
 * rank {@code r mod n} (n ranks in the source) with its own process id, device {@code r} and its
 * timeline {@code r × }{@link #RANK_SKEW_NS} later (so that the copies of one source rank wait for
 * each other too), all of it repeated {@code copies} times one after the other. Every copy carries
 * the same NVTX step ranges as its source rank, so the k-th collective of a step lines up on all
 * ranks. With {@code ranks = 1} it is the single-GPU path: the source's rank 0 alone.
 *
 * <p>Time copy {@code k} is shifted by {@code k} periods (the source's length plus a millisecond)
 * and its correlation ids by {@code k} times the largest one, so they stay unique within each
 * process; the 32-hex trace ids in its range texts become other ids ({@link #traceId}), so each
 * copy serves requests of its own. Rows go out in start order, as Nsight writes them (the importer
 * streams the tables in rowid order and falls back to sorting otherwise). Besides the activity,
 * runtime and NVTX tables only what the importer reads is copied: StringIds and the TARGET_INFO
 * session start and system environment.
 */
final class TensorParallelExport {
  /** How much later each rank's timeline is than the one before it. */
  static final long RANK_SKEW_NS = 2_000;

  /**
   * Between time copies: more than the skew of all ranks, so that copies never overlap; the same
   * for any rank count.
   */
  private static final long PERIOD_MARGIN_NS = 1_000_000;

  static final String KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL";
  private static final String RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME";
  private static final String NVTX = "NVTX_EVENTS";
  private static final List<String> ACTIVITY =
      List.of(KERNEL, "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET");
  private static final List<String> AS_IS =
      List.of("StringIds", "TARGET_INFO_SESSION_START_TIME", "TARGET_INFO_SYSTEM_ENV");
  private static final long PID_UNIT =
      1L << 24; // globalPid = (vm << 48) | (pid << 24); globalTid adds the tid
  private static final long PID_STRIDE =
      100_000; // copies of a source rank: its pid plus multiples of this
  private static final Pattern TRACE_ID = Pattern.compile("\\b[0-9a-f]{32}\\b");

  /**
   * What was built.
   *
   * @param kernels rows of the kernel table
   * @param periodNs how far apart the time copies are
   * @param firstUnixNs the earliest start in it (Unix ns)
   * @param lastUnixNs the latest end in it (Unix ns)
   */
  record Built(
      Path file,
      int ranks,
      int firstCopy,
      int copies,
      long kernels,
      long periodNs,
      long firstUnixNs,
      long lastUnixNs) {}

  /** One source rank: the process and the device it drove. */
  record SourceRank(long globalPid, long device) {}

  private TensorParallelExport() {}

  /**
   * Usage: {@code TensorParallelExport <tp.sqlite> <target.sqlite> [ranks=8] [copies=1]}: builds
   * one to look at.
   */
  public static void main(String[] args) throws SQLException {
    if (args.length < 2) {
      throw new IllegalArgumentException(
          "usage: TensorParallelExport <tp.sqlite> <target.sqlite> [ranks=8] [copies=1]");
    }
    Built b =
        build(
            Path.of(args[0]),
            Path.of(args[1]),
            args.length > 2 ? Integer.parseInt(args[2]) : 8,
            args.length > 3 ? Integer.parseInt(args[3]) : 1,
            0);
    System.out.printf(
        Locale.ROOT,
        "%s: %d kernels, %d ranks x %d time copies%n",
        b.file(),
        b.kernels(),
        b.ranks(),
        b.copies());
  }

  /**
   * Builds {@code target} (which must not exist) from {@code source}: time copies {@code firstCopy}
   * to {@code firstCopy + copies - 1} (copy 0 keeps the source's times and trace ids).
   */
  static Built build(Path source, Path target, int ranks, int copies, int firstCopy)
      throws SQLException {
    if (ranks < 1 || copies < 1 || firstCopy < 0) {
      throw new IllegalArgumentException(
          "ranks and copies must be at least 1 and the first copy at least 0, got "
              + ranks
              + ", "
              + copies
              + ", "
              + firstCopy);
    }
    if (ranks * RANK_SKEW_NS >= PERIOD_MARGIN_NS) {
      throw new IllegalArgumentException(
          "at most " + (PERIOD_MARGIN_NS / RANK_SKEW_NS - 1) + " ranks, got " + ranks);
    }
    if (!Files.isRegularFile(source)) {
      throw new IllegalArgumentException(source + ": no such file");
    }
    if (Files.exists(target)) {
      throw new IllegalArgumentException(target + " exists already");
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + target);
        Statement st = c.createStatement()) {
      st.execute("PRAGMA journal_mode=OFF");
      st.execute("PRAGMA synchronous=OFF");
      st.execute(
          "ATTACH DATABASE '" + source.toAbsolutePath().toString().replace("'", "''") + "' AS src");
      List<SourceRank> sources = sourceRanks(c, source);
      Set<String> tables = tables(c);
      for (String t : List.of(KERNEL, RUNTIME, NVTX)) {
        if (!tables.contains(t)) {
          throw new IllegalArgumentException(
              source
                  + ": no "
                  + t
                  + " table: not a tensor-parallel Nsight export with"
                  + " runtime calls and NVTX ranges");
        }
      }
      long[] pidDelta = pidDeltas(sources, ranks, source);
      long period =
          single(
                  st,
                  "SELECT max(e) - min(s) FROM ("
                      + union(tables, "max(\"end\") AS e, min(start) AS s")
                      + ")")
              + PERIOD_MARGIN_NS;
      long correlations =
          single(
              st,
              "SELECT max(m) + 1 FROM (" + union(tables, "max(correlationId) AS m", NVTX) + ")");
      for (String t : tables) {
        try (ResultSet rs =
            st.executeQuery(
                "SELECT sql FROM src.sqlite_master WHERE type = 'table' AND name = '" + t + "'")) {
          rs.next();
          st.execute(rs.getString(1));
        }
      }
      for (String t : AS_IS) {
        if (tables.contains(t)) {
          st.execute("INSERT INTO main." + t + " SELECT * FROM src." + t);
        }
      }
      c.setAutoCommit(false);
      renamedTexts(c, firstCopy, copies);
      for (int k = firstCopy; k < firstCopy + copies; k++) {
        for (String t : tables) {
          if (!AS_IS.contains(t)) {
            st.execute(copy(c, t, k, k * period, k * correlations, ranks, sources, pidDelta));
          }
        }
      }
      c.commit();
      st.execute("DROP TABLE temp.llmlat_texts");
      long offset =
          tables.contains("TARGET_INFO_SESSION_START_TIME")
              ? single(st, "SELECT IFNULL(max(utcEpochNs), 0) FROM TARGET_INFO_SESSION_START_TIME")
              : 0;
      long kernels = single(st, "SELECT count(*) FROM " + KERNEL);
      long first = single(st, "SELECT min(start) FROM " + RUNTIME) + offset;
      long last = single(st, "SELECT max(\"end\") FROM " + KERNEL) + offset;
      return new Built(target, ranks, firstCopy, copies, kernels, period, first, last);
    }
  }

  /** The source's ranks, by device: each a process with the one device its kernels ran on. */
  static List<SourceRank> sourceRanks(Connection c, Path source) throws SQLException {
    List<SourceRank> ranks = new ArrayList<>();
    Set<Long> pids = new HashSet<>();
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT DISTINCT globalPid, deviceId FROM src."
                    + KERNEL
                    + " ORDER BY deviceId, globalPid")) {
      while (rs.next()) {
        if (rs.getObject(1) == null) {
          throw new IllegalArgumentException(
              source + ": kernels without a globalPid: the ranks' processes cannot be told apart");
        }
        SourceRank r = new SourceRank(rs.getLong(1), rs.getLong(2));
        if (!pids.add(r.globalPid())) {
          throw new IllegalArgumentException(
              source
                  + ": process "
                  + (r.globalPid() / PID_UNIT % PID_UNIT)
                  + " ran kernels on more than one device: one process per rank is what is replicated");
        }
        ranks.add(r);
      }
    }
    if (ranks.isEmpty()) {
      throw new IllegalArgumentException(source + ": no kernels");
    }
    return ranks;
  }

  /** Per target rank, what is added to its source's globalPid and globalTid values. */
  private static long[] pidDeltas(List<SourceRank> sources, int ranks, Path source) {
    long[] delta = new long[ranks];
    Set<Long> pids = new HashSet<>();
    for (int r = 0; r < ranks; r++) {
      SourceRank s = sources.get(r % sources.size());
      long pid = s.globalPid() / PID_UNIT % PID_UNIT + (long) (r / sources.size()) * PID_STRIDE;
      if (pid >= PID_UNIT || !pids.add(pid)) {
        throw new IllegalArgumentException(
            source + ": no room for " + ranks + " distinct rank process ids");
      }
      delta[r] = (long) (r / sources.size()) * PID_STRIDE * PID_UNIT;
    }
    return delta;
  }

  private static Set<String> tables(Connection c) throws SQLException {
    Set<String> tables = new LinkedHashSet<>();
    List<String> wanted = new ArrayList<>(AS_IS);
    wanted.addAll(ACTIVITY);
    wanted.add(RUNTIME);
    wanted.add(NVTX);
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT name FROM src.sqlite_master WHERE type = 'table'")) {
      Set<String> present = new HashSet<>();
      while (rs.next()) {
        present.add(rs.getString(1));
      }
      for (String t : wanted) {
        if (present.contains(t)) {
          tables.add(t);
        }
      }
    }
    return tables;
  }

  /** {@code SELECT what FROM} each activity, runtime (and NVTX) table, as one union. */
  private static String union(Set<String> tables, String what, String... without) {
    List<String> parts = new ArrayList<>();
    for (String t : tables) {
      if (!AS_IS.contains(t) && !List.of(without).contains(t)) {
        parts.add("SELECT " + what + " FROM src." + t);
      }
    }
    return String.join(" UNION ALL ", parts);
  }

  private static long single(Statement st, String sql) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * Time copy {@code k}'s trace id for {@code id}: eight of its hex digits (across both halves,
   * which the benchmarks' engine spans take their span ids from) advanced by {@code k} times an odd
   * constant, so the copies of one id differ. Copy 0 is the id itself.
   */
  static String traceId(String id, int k) {
    if (k == 0) {
      return id;
    }
    long mid = Long.parseLong(id.substring(12, 20), 16);
    return id.substring(0, 12)
        + String.format(Locale.ROOT, "%08x", (mid + k * 0x9E3779B1L) & 0xFFFFFFFFL)
        + id.substring(20);
  }

  /** {@code text} with every trace id in it renamed for copy {@code k}. */
  static String renamed(String text, int k) {
    Matcher m = TRACE_ID.matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(out, traceId(m.group(), k));
    }
    return m.appendTail(out).toString();
  }

  /** temp.llmlat_texts(copy, old, new): the range texts that name trace ids, per copy, renamed. */
  private static void renamedTexts(Connection c, int firstCopy, int copies) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(
          "CREATE TEMP TABLE llmlat_texts (copy INTEGER, old TEXT, new TEXT, PRIMARY KEY (copy, old))");
    }
    List<String> texts = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT DISTINCT " + textOf("n") + " FROM src." + NVTX + " n")) {
      while (rs.next()) {
        String text = rs.getString(1);
        if (text != null && TRACE_ID.matcher(text).find()) {
          texts.add(text);
          Matcher m = TRACE_ID.matcher(text);
          while (m.find()) {
            ids.add(m.group());
          }
        }
      }
    }
    Set<String> renamedIds = new HashSet<>();
    for (String id : ids) {
      for (int k = firstCopy; k < firstCopy + copies; k++) {
        if (!renamedIds.add(traceId(id, k))) {
          throw new IllegalStateException(
              "trace id " + id + " of copy " + k + " collides with another's: " + traceId(id, k));
        }
      }
    }
    try (PreparedStatement ps =
        c.prepareStatement("INSERT INTO temp.llmlat_texts VALUES (?, ?, ?)")) {
      for (int k = Math.max(1, firstCopy); k < firstCopy + copies; k++) {
        for (String t : texts) {
          ps.setInt(1, k);
          ps.setString(2, t);
          ps.setString(3, renamed(t, k));
          ps.addBatch();
        }
      }
      ps.executeBatch();
    }
  }

  private static String textOf(String alias) {
    return "COALESCE("
        + alias
        + ".text, (SELECT value FROM src.StringIds s WHERE s.id = "
        + alias
        + ".textId))";
  }

  /**
   * The INSERT of table {@code t}'s rows for time copy {@code k}, every rank's together in start
   * order.
   */
  private static String copy(
      Connection c,
      String t,
      int k,
      long dt,
      long dc,
      int ranks,
      List<SourceRank> sources,
      long[] pidDelta)
      throws SQLException {
    List<String> columns = new ArrayList<>();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("PRAGMA src.table_info(" + t + ")")) {
      while (rs.next()) {
        columns.add(rs.getString("name"));
      }
    }
    boolean activity = ACTIVITY.contains(t);
    boolean nvtx = t.equals(NVTX);
    boolean renames = nvtx && k > 0;
    List<String> selects = new ArrayList<>();
    for (int r = 0; r < ranks; r++) {
      SourceRank s = sources.get(r % sources.size());
      long shift = dt + r * RANK_SKEW_NS;
      List<String> values = new ArrayList<>();
      for (String col : columns) {
        String q = "n.\"" + col + "\"";
        values.add(
            switch (col) {
                  case "start", "end" -> q + " + " + shift;
                  case "correlationId" -> q + " + " + dc;
                  case "globalPid", "globalTid", "endGlobalTid" -> q + " + " + pidDelta[r];
                  case "deviceId" -> activity ? Integer.toString(r) : q;
                  case "text" -> renames ? "IFNULL(m.new, n.text)" : q;
                  case "textId" -> renames ? "CASE WHEN m.new IS NULL THEN n.textId END" : q;
                  default -> q;
                }
                + " AS \""
                + col
                + "\"");
      }
      String process =
          activity
              ? "n.globalPid = " + s.globalPid()
              : "n.globalTid >= "
                  + s.globalPid()
                  + " AND n.globalTid < "
                  + (s.globalPid() + PID_UNIT);
      selects.add(
          "SELECT "
              + String.join(", ", values)
              + " FROM src."
              + t
              + " n"
              + (renames
                  ? " LEFT JOIN temp.llmlat_texts m ON m.copy = "
                      + k
                      + " AND m.old = "
                      + textOf("n")
                  : "")
              + " WHERE "
              + process);
    }
    String cols = String.join(", ", columns.stream().map(col -> "\"" + col + "\"").toList());
    return "INSERT INTO main."
        + t
        + " ("
        + cols
        + ") SELECT "
        + cols
        + " FROM ("
        + String.join(" UNION ALL ", selects)
        + ") ORDER BY start";
  }
}
