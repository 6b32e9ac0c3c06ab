package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.InvalidExportException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * An Nsight Systems sqlite export, opened read-only, with its schema checked up front: which
 * activity tables and columns exist (exports differ by version and by what was traced), the
 * session's wall-clock anchor, the string table.
 */
public final class NsysExport implements AutoCloseable {
  public static final String KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL";
  public static final String MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY";
  public static final String MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET";
  public static final String RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME";
  public static final String NVTX = "NVTX_EVENTS";
  static final String RULE_SESSION = "nsys:TARGET_INFO_SESSION_START_TIME.utcEpochNs+start";
  static final String RULE_RELATIVE =
      "nsys:start (no TARGET_INFO_SESSION_START_TIME; session-relative ns)";
  private static final String[] ACTIVITY_COLUMNS = {
    "start", "end", "deviceId", "streamId", "correlationId"
  };

  /**
   * CUDA runtime/driver calls that never enqueue work on a device, so no kernel, memcpy or memset
   * correlates with them: getters, queries, attribute setters, object creation and destruction,
   * synchronization (e.g. {@code cuKernelGetName}, {@code cudaStreamIsCapturing_v10000}, {@code
   * cudaEventQuery_v3020}). Matched on a camel-case word so that no launch or copy API can match;
   * checked against every real capture under ../shared/traces by NonLaunchingCallsTest.
   */
  public static final Pattern NON_LAUNCHING =
      Pattern.compile(
          "cu(?:da)?[A-Za-z0-9]*?(?:Get|Query|IsCapturing|SetAttribute|Create|Destroy|Synchronize)(?![a-z])");

  /** Page cache while sorting whole activity tables, in sqlite's negative-KiB form: 256 MiB. */
  private static final int SORT_CACHE_KIB = -262144;

  private static final String[] COPY_KINDS = {
    "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"
  };

  private final Path file;
  private final Connection db;
  private final Map<String, Set<String>> columns = new HashMap<>();
  private final Long sessionStartNs;
  private StringIds strings;
  private String nonLaunching;

  private NsysExport(Path file, Connection db) throws InvalidExportException {
    this.file = file;
    this.db = db;
    try (Statement st = db.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT name FROM sqlite_master WHERE type IN ('table','view')")) {
      while (rs.next()) {
        columns.put(rs.getString(1), null);
      }
    } catch (SQLException e) {
      throw new InvalidExportException(file, "not a readable sqlite database", e);
    }
    List<String> activity = new ArrayList<>();
    for (String t : List.of(KERNEL, MEMCPY, MEMSET)) {
      if (columns.containsKey(t)) {
        Set<String> cols = loadColumns(t);
        for (String c : ACTIVITY_COLUMNS) {
          if (!cols.contains(c)) {
            throw new InvalidExportException(file, t + " lacks column '" + c + "'");
          }
        }
        activity.add(t);
      }
    }
    if (activity.isEmpty()) {
      throw new InvalidExportException(
          file,
          "not an Nsight Systems export with CUDA activity: no "
              + KERNEL
              + ", "
              + MEMCPY
              + " or "
              + MEMSET
              + " table (tables: "
              + columns.size()
              + ")");
    }
    for (String t : List.of(RUNTIME, NVTX, "StringIds", "TARGET_INFO_SYSTEM_ENV")) {
      if (columns.containsKey(t)) {
        loadColumns(t);
      }
    }
    if (has(RUNTIME) && !hasColumns(RUNTIME, "correlationId", "globalTid", "start")) {
      throw new InvalidExportException(file, RUNTIME + " lacks correlationId/globalTid/start");
    }
    this.sessionStartNs = readSessionStart();
  }

  public static NsysExport open(Path file) throws InvalidExportException {
    Inputs.checkReadable(file);
    try {
      if (Files.size(file) == 0) {
        throw new InvalidExportException(file, "empty file");
      }
    } catch (java.io.IOException e) {
      throw new InvalidExportException(file, "unreadable", e);
    }
    Connection c;
    try {
      c =
          DriverManager.getConnection(
              "jdbc:sqlite:" + file.toAbsolutePath(),
              dev.llmlat.gpu.NsysConnections.config().toProperties());
    } catch (SQLException e) {
      throw new InvalidExportException(file, "cannot open as sqlite", e);
    }
    try {
      return new NsysExport(file, c);
    } catch (InvalidExportException | RuntimeException e) {
      closeQuietly(c);
      throw e;
    }
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException ignored) {
      // Already failing; the first error is the one to report.
    }
  }

  private Set<String> loadColumns(String table) throws InvalidExportException {
    Set<String> cols = new HashSet<>();
    try (Statement st = db.createStatement();
        ResultSet rs = st.executeQuery("PRAGMA table_info(" + table + ")")) {
      while (rs.next()) {
        cols.add(rs.getString("name"));
      }
    } catch (SQLException e) {
      throw new InvalidExportException(file, "cannot read the columns of " + table, e);
    }
    columns.put(table, cols);
    return cols;
  }

  private Long readSessionStart() throws InvalidExportException {
    if (!columns.containsKey("TARGET_INFO_SESSION_START_TIME")) {
      return null;
    }
    try (Statement st = db.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1")) {
      if (!rs.next()) {
        return null;
      }
      long start = rs.getLong(1);
      if (start < 0) { // every time is offset by it: refuse one clock error here, not every row
        throw new InvalidExportException(
            file,
            "TARGET_INFO_SESSION_START_TIME.utcEpochNs: " + start + " ns " + Limits.BEFORE_1970);
      }
      return start;
    } catch (SQLException e) {
      throw new InvalidExportException(file, "unreadable TARGET_INFO_SESSION_START_TIME", e);
    }
  }

  public Path file() {
    return file;
  }

  public boolean has(String table) {
    return columns.containsKey(table);
  }

  public boolean hasColumns(String table, String... names) {
    Set<String> cols = columns.get(table);
    if (cols == null) {
      return false;
    }
    for (String n : names) {
      if (!cols.contains(n)) {
        return false;
      }
    }
    return true;
  }

  /** Added to every export timestamp to get Unix ns (0 when the export has no session start). */
  public long epochOffsetNs() {
    return sessionStartNs == null ? 0 : sessionStartNs;
  }

  public String clockRule() {
    return sessionStartNs == null ? RULE_RELATIVE : RULE_SESSION;
  }

  public Connection db() {
    return db;
  }

  /**
   * StringIds, read once: kernel names and NVTX text refer to it by id. Null when there is no such
   * id.
   */
  public String string(long id) throws SQLException {
    return strings().get(id);
  }

  /** {@link #string}'s UTF-8 bytes (shared: not to be modified), or null. */
  byte[] stringUtf8(long id) throws SQLException {
    return strings().utf8(id);
  }

  private StringIds strings() throws SQLException {
    if (strings == null) {
      strings = StringIds.read(has("StringIds") ? db : null);
    }
    return strings;
  }

  private static final byte[][] MEMCPY_NAMES_UTF8 = new byte[COPY_KINDS.length][];

  static {
    for (int k = 0; k < COPY_KINDS.length; k++) {
      MEMCPY_NAMES_UTF8[k] = memcpyName(k).getBytes(StandardCharsets.UTF_8);
    }
  }

  /** {@link #memcpyName}'s UTF-8 bytes (shared: not to be modified). */
  static byte[] memcpyNameUtf8(int copyKind) {
    return copyKind >= 0 && copyKind < COPY_KINDS.length
        ? MEMCPY_NAMES_UTF8[copyKind]
        : memcpyName(copyKind).getBytes(StandardCharsets.UTF_8);
  }

  public static String memcpyName(int copyKind) {
    return "Memcpy "
        + (copyKind >= 0 && copyKind < COPY_KINDS.length
            ? COPY_KINDS[copyKind]
            : "kind " + copyKind);
  }

  /**
   * {@code min(rowid)} and {@code max(rowid) + 1} of {@code table} (both 0 when empty). Two plain
   * queries on purpose: sqlite answers a lone {@code min}/{@code max} of the rowid from the
   * b-tree's edge, but scans the table for anything more complex.
   */
  long[] rowidRange(String table) throws SQLException {
    long[] range = new long[2];
    try (Statement st = db.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT min(rowid) FROM " + table)) {
        range[0] = rs.next() ? rs.getLong(1) : 0;
      }
      try (ResultSet rs = st.executeQuery("SELECT max(rowid) FROM " + table)) {
        range[1] = rs.next() && rs.getObject(1) != null ? rs.getLong(1) + 1 : 0;
      }
    }
    return range;
  }

  /**
   * A second read-only connection to the same export, for a reader thread. It takes this one's
   * runtime-call filter rather than querying StringIds and sampling the runtime table again.
   */
  NsysExport reopen() throws InvalidExportException {
    String filter;
    try {
      filter = nonLaunchingFilter();
    } catch (SQLException e) {
      throw new InvalidExportException(file, "unreadable Nsight export: " + describe(e), e);
    }
    NsysExport second = open(file);
    second.nonLaunching = filter;
    return second;
  }

  /** Rough row count of the activity tables (max rowid), for progress only. */
  public long activityRowsEstimate() throws SQLException {
    long total = 0;
    for (String t : List.of(KERNEL, MEMCPY, MEMSET)) {
      if (has(t)) {
        try (Statement st = db.createStatement();
            ResultSet rs = st.executeQuery("SELECT max(rowid) FROM " + t)) {
          total += rs.next() ? rs.getLong(1) : 0;
        }
      }
    }
    return total;
  }

  /**
   * One activity table's rows in rowid order: start order in the exports Nsight writes, which
   * {@link ActivityStream} checks as it reads (a separate pass to check it cost half a raw scan of
   * the table; sorting in sqlite doubled the scan). Columns: start, end, deviceId, streamId,
   * correlationId, globalPid, then for kernels the name id, for memcpys bytes and copyKind, for
   * memsets bytes. A NULL correlation id, globalPid or name id reads as -1 ({@link
   * ActivityCursor#NONE}), which spares a {@code wasNull()} call per column.
   */
  PreparedStatement activityScan(String table) throws SQLException {
    return db.prepareStatement(activityColumns(table) + " FROM " + table);
  }

  /**
   * The same rows sorted by start (equal starts in rowid order), with two more columns: 1 for a row
   * whose rowid is below {@code seenBelowRowid}, else 0; the rowid (to name a bad row: in this rare
   * read one more column costs nothing worth measuring).
   */
  PreparedStatement sortedActivityScan(String table, long seenBelowRowid) throws SQLException {
    try (Statement st = db.createStatement()) {
      st.execute(
          "PRAGMA cache_size = " + SORT_CACHE_KIB); // the sorter keeps this much in memory per run
    }
    return db.prepareStatement(
        activityColumns(table)
            + ", rowid < "
            + seenBelowRowid
            + ", rowid FROM "
            + table
            + " ORDER BY start, rowid");
  }

  /**
   * Why {@code t} ns of this export is no Unix ns time once the session start is added, or null
   * when it is one: before 1970, or past 2262 (a long overflows).
   */
  String timeProblem(long t) {
    long offset = epochOffsetNs(); // >= 0, see readSessionStart
    if (t >= -offset && t <= Long.MAX_VALUE - offset) {
      return null;
    }
    String anchor =
        sessionStartNs == null
            ? " (no session start: read as Unix ns)"
            : " + session start " + offset + " ns";
    return t + " ns" + anchor + " " + (t < 0 ? Limits.BEFORE_1970 : Limits.PAST_2262);
  }

  private String activityColumns(String table) throws SQLException {
    String extra;
    if (table.equals(KERNEL)) {
      String name =
          hasColumns(KERNEL, "shortName")
              ? (hasColumns(KERNEL, "demangledName")
                  ? "COALESCE(shortName, demangledName)"
                  : "shortName")
              : hasColumns(KERNEL, "demangledName") ? "demangledName" : "NULL";
      extra = "IFNULL(" + name + ", -1)";
    } else if (table.equals(MEMCPY)) {
      extra = col(MEMCPY, "bytes", "-1") + ", " + col(MEMCPY, "copyKind", "-1");
    } else {
      extra = col(table, "bytes", "-1");
    }
    String pid = hasColumns(table, "globalPid") ? "IFNULL(globalPid, -1)" : "-1";
    return "SELECT start, end, deviceId, streamId, IFNULL(correlationId, -1), "
        + pid
        + ", "
        + extra;
  }

  /**
   * The rowid of the row that follows the first {@code n} rows of {@code table} in rowid order;
   * Long.MAX_VALUE when there is none.
   */
  long rowidAfter(String table, long n) throws SQLException {
    try (PreparedStatement ps =
        db.prepareStatement("SELECT rowid FROM " + table + " ORDER BY rowid LIMIT 1 OFFSET ?")) {
      ps.setLong(1, n);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : Long.MAX_VALUE;
      }
    }
  }

  /**
   * Runtime/driver calls that can have launched something, rowids in [?, ?): correlationId,
   * globalTid, start.
   */
  PreparedStatement launchCalls() throws SQLException {
    // The name test comes first: it drops most rows before sqlite reads their other columns.
    return db.prepareStatement(
        "SELECT correlationId, globalTid, start FROM "
            + RUNTIME
            + " WHERE rowid >= ? AND rowid < ?"
            + nonLaunchingFilter()
            + " AND correlationId IS NOT NULL AND globalTid IS NOT NULL");
  }

  /**
   * A condition leaving out the runtime/driver calls that never enqueue GPU work (see {@link
   * #NON_LAUNCHING}), or "" when the export has none. Measured on the H200 captures: more than half
   * the runtime rows are such calls ({@code cuKernelGetAttribute}, {@code cuKernelGetName}, ...),
   * and sqlite drops them for less than it costs to read them through JDBC. A {@code CASE} over a
   * few ids costs sqlite less than {@code NOT IN} (which probes an ephemeral index per row); its
   * branches are ordered by how often each name occurs in a sample of the table, launching names
   * included (they stop at their own branch instead of running through all the others).
   */
  private String nonLaunchingFilter() throws SQLException {
    if (nonLaunching == null) {
      Map<Long, Boolean> skip =
          new HashMap<>(); // StringIds id -> whether calls of that name launch nothing
      if (hasColumns(RUNTIME, "nameId") && has("StringIds")) {
        // GLOB keeps the JDBC traffic to API names; kernel names starting "cu" are few and fail the
        // pattern.
        try (Statement st = db.createStatement();
            ResultSet rs =
                st.executeQuery("SELECT id, value FROM StringIds WHERE value GLOB 'cu*'")) {
          while (rs.next() && skip.size() < 4096) {
            String name = rs.getString(2);
            skip.put(rs.getLong(1), name != null && NON_LAUNCHING.matcher(name).lookingAt());
          }
        }
      }
      if (!skip.containsValue(true)) {
        nonLaunching = "";
        return nonLaunching;
      }
      StringBuilder cases = new StringBuilder(" AND CASE nameId");
      Set<Long> written = new HashSet<>();
      for (long id : commonNames()) {
        Boolean skipped = skip.get(id);
        if (skipped != null) {
          cases.append(" WHEN ").append(id).append(skipped ? " THEN 0" : " THEN 1");
          written.add(id);
        }
      }
      int n = 0;
      for (Map.Entry<Long, Boolean> e : skip.entrySet()) {
        if (e.getValue() && !written.contains(e.getKey()) && n++ < 256) {
          cases.append(" WHEN ").append(e.getKey()).append(" THEN 0");
        }
      }
      nonLaunching = cases.append(" ELSE 1 END").toString();
    }
    return nonLaunching;
  }

  /**
   * The nameIds of a few thousand runtime calls from the middle of the table, most frequent first.
   */
  private List<Long> commonNames() throws SQLException {
    long[] rowids = rowidRange(RUNTIME);
    List<Long> ids = new ArrayList<>();
    try (PreparedStatement ps =
        db.prepareStatement(
            "SELECT nameId FROM (SELECT nameId FROM "
                + RUNTIME
                + " WHERE rowid >= ? LIMIT 8192) GROUP BY nameId ORDER BY count(*) DESC LIMIT 64")) {
      ps.setLong(1, rowids[0] + (rowids[1] - rowids[0]) / 2);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
    }
    return ids;
  }

  private String col(String table, String column, String fallback) {
    return hasColumns(table, column) ? column : fallback;
  }

  /** NVTX push/pop and start/end ranges (event types 59, 60): start, end, globalTid, text. */
  public PreparedStatement ranges() throws SQLException {
    String text =
        hasColumns(NVTX, "textId") && has("StringIds")
            ? "COALESCE(n.text, (SELECT value FROM StringIds s WHERE s.id = n.textId))"
            : "n.text";
    String tid = hasColumns(NVTX, "globalTid") ? "n.globalTid" : "0";
    return db.prepareStatement(
        "SELECT n.start, n.end, "
            + tid
            + ", "
            + text
            + " FROM "
            + NVTX
            + " n WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL ORDER BY n.start");
  }

  /**
   * The profiled host's name (TARGET_INFO_SYSTEM_ENV {@code Hostname}), or null when the export
   * does not say.
   */
  public String hostName() throws SQLException {
    if (!hasColumns("TARGET_INFO_SYSTEM_ENV", "name", "value")) {
      return null;
    }
    try (Statement st = db.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname' AND value IS NOT NULL LIMIT 1")) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  /** Process id and thread id of an Nsight {@code globalTid}. */
  public static long pidOf(long globalTid) {
    return (globalTid >> 24) & 0xFFFFFF;
  }

  public static long tidOf(long globalTid) {
    return globalTid & 0xFFFFFF;
  }

  public static String describe(SQLException e) {
    String m = e.getMessage() == null ? e.toString() : e.getMessage();
    return m.toLowerCase(Locale.ROOT).contains("not a database")
        ? "not an sqlite database (" + m + ")"
        : m;
  }

  @Override
  public void close() {
    closeQuietly(db);
  }
}
