package dev.llmlat.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.runtime.home.EngineLibrary;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedClickHouseTest {
  @TempDir Path dir;

  static EmbeddedClickHouse open(Path dataDir) {
    return EmbeddedClickHouse.open(dataDir, EngineLibrary.locate());
  }

  @Test
  void runsTheClickHouse26Engine() {
    try (EmbeddedClickHouse store = open(dir)) {
      assertThat(store.query("SELECT version()").single()).startsWith("26.");
    }
  }

  @Test
  void keepsDataAcrossRestarts() {
    try (EmbeddedClickHouse store = open(dir)) {
      store.execute(
          "CREATE TABLE t (ts DateTime64(9), m Map(String, String)) ENGINE = MergeTree ORDER BY ts");
      store.execute("INSERT INTO t VALUES ('2026-11-29 10:00:00.123456789', {'a':'b'})");
    }
    try (EmbeddedClickHouse store = open(dir)) {
      QueryResult r =
          store.query(
              "SELECT toUnixTimestamp64Nano(ts) AS ns, m['a'] AS a, toTypeName(ts) AS type FROM t");
      assertThat(r.rows()).containsExactly(List.of("1795946400123456789", "b", "DateTime64(9)"));
      assertThat(r.columns())
          .extracting(QueryResult.Column::type)
          .containsExactly("Int64", "String", "String");
    }
  }

  @Test
  void decodesEscapesAndNulls() {
    try (EmbeddedClickHouse store = open(dir)) {
      QueryResult r =
          store.query(
              "SELECT 'tab\\there' AS a, 'line\\nbreak' AS b, 'back\\\\slash' AS c, NULL AS d, '' AS e");
      assertThat(r.rows().get(0))
          .containsExactly("tab\there", "line\nbreak", "back\\slash", null, "");
    }
  }

  @Test
  void insertsRowBinaryWithZeroBytesAndDeduplicatesByToken() {
    try (EmbeddedClickHouse store = open(dir)) {
      store.execute(
          "CREATE TABLE b (n UInt32, s String) ENGINE = MergeTree ORDER BY n"
              + " SETTINGS non_replicated_deduplication_window = 100");
      byte[] rows = new RowBinaryWriter(16).uint32(7).string("a\0b").toByteArray();
      store.insertRowBinary("b", List.of("n", "s"), rows, "batch-1");
      store.insertRowBinary("b", List.of("n", "s"), rows, "batch-1"); // a retry: no new row
      store.insertRowBinary("b", List.of("n", "s"), rows, "batch-2");
      assertThat(store.query("SELECT n, hex(s), count() FROM b GROUP BY n, s").rows())
          .containsExactly(List.of("7", "610062", "2"));
    }
  }

  @Test
  void namesTheQueryAndClickHouseErrorWhenRefused() {
    try (EmbeddedClickHouse store = open(dir)) {
      assertThatThrownBy(() -> store.query("SELECT * FROM no_such_table"))
          .isInstanceOf(StoreException.class)
          .hasMessageContaining("Code: 60")
          .hasMessageContaining("no_such_table")
          .hasMessageContaining("in: SELECT * FROM no_such_table");
      // the JVM keeps its own signal handling after the engine started: implicit null checks work
      Object nothing = null;
      assertThatThrownBy(() -> nothing.toString()).isInstanceOf(NullPointerException.class);
      assertThat(store.query("SELECT 1").single()).isEqualTo("1");
    }
  }

  @Test
  void refusesASecondOwnerInTheSameProcess() {
    try (EmbeddedClickHouse store = open(dir)) {
      assertThatThrownBy(() -> open(dir))
          .isInstanceOf(StoreException.class)
          .hasMessageContaining("in use by another process")
          .hasMessageContaining("pid " + ProcessHandle.current().pid());
      assertThat(store.query("SELECT 1").single()).isEqualTo("1");
    }
    try (EmbeddedClickHouse again = open(dir)) {
      assertThat(again.query("SELECT 2").single()).isEqualTo("2");
    }
  }

  @Test
  void explainsAMissingEngineLibrary() {
    assertThatThrownBy(() -> EmbeddedClickHouse.open(dir, dir.resolve("nowhere/libchdb.so")))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("engine library not found at " + dir.resolve("nowhere/libchdb.so"))
        .hasMessageContaining("scripts/fetch-chdb");
  }

  /** Rows as the engine sends them, chunk by chunk; closing early stops the query. */
  @Test
  void streamsRowsAsTheEngineSendsThem() {
    try (EmbeddedClickHouse store = open(dir)) {
      RowStreams.behaves(store);
    }
  }
}
