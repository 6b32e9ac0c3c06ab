package dev.llmlat.store.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SqlTextTest {
  @Test
  void countsStatementsOutsideStringsAndComments() {
    assertThat(SqlText.of("SELECT 1").statements()).isEqualTo(1);
    assertThat(SqlText.of("SELECT 1;").statements()).isEqualTo(1);
    assertThat(SqlText.of("SELECT 1; -- done\n").statements()).isEqualTo(1);
    assertThat(SqlText.of("SELECT 1; DROP TABLE t").statements()).isEqualTo(2);
    assertThat(
            SqlText.of("SELECT 'a;b', \"c;d\", `e;f` /* ; /* nested ; */ ; */ # ;\n").statements())
        .isEqualTo(1);
    assertThat(SqlText.of("SELECT 'it''s; \\' ;'").statements()).isEqualTo(1);
    assertThat(SqlText.of("SELECT $$ ; $$, $tag$ ; $tag$").statements()).isEqualTo(1);
    assertThat(SqlText.of("  -- only a comment\n").statements()).isZero();
  }

  @Test
  void findsTheFormatClauseAndWhereInlineDataBegins() {
    assertThat(SqlText.of("SELECT 1 FORMAT JSON").format()).isEqualTo("JSON");
    assertThat(SqlText.of("SELECT 1 FORMAT JSON SETTINGS max_threads = 1").format())
        .isEqualTo("JSON");
    assertThat(SqlText.of("SELECT format FROM t").format()).isNull();
    assertThat(SqlText.of("SELECT formatDateTime(now(), '%F') FORMAT TSV").format())
        .isEqualTo("TSV");
    SqlText insert = SqlText.of("INSERT INTO t (format, a) FORMAT TSV\n1\t'x';DROP\n");
    assertThat(insert.isInsertWithFormat()).isTrue();
    assertThat(insert.format()).isEqualTo("TSV");
    assertThat(insert.statements()).isEqualTo(1); // what follows FORMAT is data, not SQL
    assertThat("INSERT INTO t (format, a) FORMAT TSV\n1\t'x';DROP\n".substring(insert.dataOffset()))
        .isEqualTo("1\t'x';DROP\n");
    assertThat(SqlText.of("INSERT INTO t FORMAT TSV").hasInlineData()).isFalse();
    assertThat(SqlText.of("INSERT INTO t SELECT 1 FORMAT TSV").hasInlineData()).isFalse();
    // VALUES is data too, in the Values format
    SqlText values = SqlText.of("INSERT INTO t VALUES (1, 'a;b'); ");
    assertThat(values.format()).isEqualTo("Values");
    assertThat("INSERT INTO t VALUES (1, 'a;b'); ".substring(values.dataOffset()))
        .isEqualTo(" (1, 'a;b'); ");
    assertThat(SqlText.of("INSERT INTO t VALUES").hasInlineData()).isFalse();
    assertThat(SqlText.of("INSERT INTO t SELECT * FROM s").isInsertWithFormat()).isFalse();
  }

  @Test
  void wordsSkipStringsAndComments() {
    SqlText text = SqlText.of("SELECT 'SET x' /* USE db */ FROM t SETTINGS max_threads = 1");
    assertThat(text.hasWord("SET", "USE")).isFalse();
    assertThat(text.hasWord("SETTINGS")).isTrue();
    assertThat(SqlText.of("set max_threads = 1").hasWord("SET")).isTrue();
  }
}
