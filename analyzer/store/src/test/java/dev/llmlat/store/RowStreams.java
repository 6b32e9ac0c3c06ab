package dev.llmlat.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What {@link ClickHouseStore#stream} must do on every store. */
final class RowStreams {
  private RowStreams() {}

  static List<List<String>> all(RowStream rows) {
    List<List<String>> out = new ArrayList<>();
    for (List<String> row; (row = rows.next()) != null; ) {
      out.add(row);
    }
    return out;
  }

  static void behaves(ClickHouseStore store) {
    // many blocks (the engine's chunks), values as query() renders them, escapes and NULLs decoded
    String sql =
        "SELECT number AS n, if(number % 3 = 0, NULL, concat('a\\tb\\n', toString({p:UInt64}))) AS s FROM numbers(200000)"
            + " SETTINGS max_block_size = 1000";
    try (RowStream rows = store.stream(sql, Map.of("p", 7))) {
      assertThat(rows.columns())
          .containsExactly(
              new QueryResult.Column("n", "UInt64"),
              new QueryResult.Column("s", "Nullable(String)"));
      List<List<String>> all = all(rows);
      assertThat(all).hasSize(200_000);
      assertThat(all).isEqualTo(store.query(sql, Map.of("p", 7)).rows());
      assertThat(all.get(1)).containsExactly("1", "a\tb\n7");
      assertThat(all.get(3)).containsExactly("3", null);
      assertThat(rows.next()).isNull();
    }
    // no rows: still the columns
    try (RowStream rows =
        store.stream("SELECT number AS n FROM numbers(10) WHERE n > 100", Map.of())) {
      assertThat(rows.columns()).containsExactly(new QueryResult.Column("n", "UInt64"));
      assertThat(rows.next()).isNull();
    }
    // statements that do not stream run whole
    try (RowStream rows =
        store.stream("CREATE TABLE streamed (a UInt8) ENGINE = Memory", Map.of())) {
      assertThat(rows.columns()).isEmpty();
      assertThat(rows.next()).isNull();
    }
    try (RowStream rows = store.stream("SHOW TABLES LIKE 'streamed'", Map.of())) {
      assertThat(all(rows)).containsExactly(List.of("streamed"));
    }
    // closed early: the endless query stops and the store answers the next one
    try (RowStream rows = store.stream("SELECT number FROM system.numbers", Map.of())) {
      for (int i = 0; i < 3; i++) {
        assertThat(rows.next()).containsExactly(Integer.toString(i));
      }
    }
    assertThat(store.query("SELECT 42").single()).isEqualTo("42");
    // a failure midway, after rows came
    assertThatThrownBy(
            () -> {
              try (RowStream rows =
                  store.stream(
                      "SELECT throwIf(number = 150000, 'boom') FROM numbers(200000) SETTINGS max_block_size = 1000",
                      Map.of())) {
                all(rows);
              }
            })
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("boom");
    assertThat(store.query("SELECT 43").single()).isEqualTo("43");
  }
}
