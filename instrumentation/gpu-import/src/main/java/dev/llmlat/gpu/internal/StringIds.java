package dev.llmlat.gpu.internal;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;

/**
 * An Nsight export's string table. Its ids are dense from 0, so they index an array: every kernel
 * looks its name up here, and a boxed map lookup per kernel showed in the profile. Sparse ids fall
 * back to a map.
 */
final class StringIds {
  private final String[] dense;
  private final Map<Long, String> sparse;
  // UTF-8 of the strings asked for by utf8(), made once per id.
  private byte[][] denseUtf8;
  private Map<Long, byte[]> sparseUtf8;

  private StringIds(String[] dense, Map<Long, String> sparse) {
    this.dense = dense;
    this.sparse = sparse;
  }

  /** Reads {@code StringIds} from {@code db}; an empty table when {@code db} is null. */
  static StringIds read(Connection db) throws SQLException {
    if (db == null) {
      return new StringIds(new String[0], null);
    }
    long max;
    long count;
    try (Statement st = db.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT IFNULL(max(id), -1), count(*), IFNULL(min(id), 0) FROM StringIds")) {
      rs.next();
      max = rs.getLong(1);
      count = rs.getLong(2);
      if (rs.getLong(3) < 0 || max >= Math.max(1024, 2 * count) || max >= Integer.MAX_VALUE - 8) {
        return new StringIds(null, readMap(db));
      }
    }
    String[] dense = new String[(int) (max + 1)];
    try (Statement st = db.createStatement();
        ResultSet rs = st.executeQuery("SELECT id, value FROM StringIds")) {
      while (rs.next()) {
        dense[(int) rs.getLong(1)] = rs.getString(2);
      }
    }
    return new StringIds(dense, null);
  }

  private static Map<Long, String> readMap(Connection db) throws SQLException {
    Map<Long, String> map = new HashMap<>();
    try (Statement st = db.createStatement();
        ResultSet rs = st.executeQuery("SELECT id, value FROM StringIds")) {
      while (rs.next()) {
        map.put(rs.getLong(1), rs.getString(2));
      }
    }
    return map;
  }

  /** The string's UTF-8 bytes (shared: not to be modified), or null. */
  byte[] utf8(long id) {
    if (dense != null) {
      if (id < 0 || id >= dense.length) {
        return null;
      }
      if (denseUtf8 == null) {
        denseUtf8 = new byte[dense.length][];
      }
      byte[] b = denseUtf8[(int) id];
      if (b == null && dense[(int) id] != null) {
        b = dense[(int) id].getBytes(StandardCharsets.UTF_8);
        denseUtf8[(int) id] = b;
      }
      return b;
    }
    if (sparseUtf8 == null) {
      sparseUtf8 = new HashMap<>();
    }
    String s = sparse.get(id);
    return s == null
        ? null
        : sparseUtf8.computeIfAbsent(id, k -> s.getBytes(StandardCharsets.UTF_8));
  }

  String get(long id) {
    if (dense == null) {
      return sparse.get(id);
    }
    return id >= 0 && id < dense.length ? dense[(int) id] : null;
  }
}
