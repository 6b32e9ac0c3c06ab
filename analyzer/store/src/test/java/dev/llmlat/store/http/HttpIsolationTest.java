package dev.llmlat.store.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What one request sets stays with it; what a session sets stays with that session; GET only reads.
 */
class HttpIsolationTest {
  @TempDir Path dir;
  StoreFixture f;
  Http http;

  @BeforeEach
  void start() throws Exception {
    f = new StoreFixture(dir);
    http = f.http;
  }

  @AfterEach
  void stop() {
    f.close();
  }

  @Test
  void twoClientsParametersNeverMeet() throws Exception {
    Http.Reply a = http.post(Map.of("param_v", "from-a"), "SELECT {v:String}");
    assertThat(a.body()).isEqualTo("from-a\n");
    // the next request, without the parameter, does not see a's value
    Http.Reply b = http.post("SELECT {v:String}");
    assertThat(b.status()).isEqualTo(500);
    assertThat(b.header("X-ClickHouse-Exception-Code")).isEqualTo("456");
    assertThat(b.body()).doesNotContain("from-a").contains("(UNKNOWN_QUERY_PARAMETER)");

    // many clients at once, each with its own value, each gets exactly its own
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<String>> answers = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        String mine = "client-" + i;
        answers.add(
            pool.submit(
                () ->
                    mine
                        + "="
                        + http.post(Map.of("param_v", mine), "SELECT {v:String}, sleep(0.01)")
                            .body()));
      }
      for (Future<String> answer : answers) {
        String[] got = answer.get().split("=", 2);
        assertThat(got[1]).isEqualTo(got[0] + "\t0\n");
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void settingsApplyToTheirRequestOnly() throws Exception {
    String defaultThreads = http.post("SELECT getSetting('max_threads')").body();
    assertThat(http.post(Map.of("max_threads", "1"), "SELECT getSetting('max_threads')").body())
        .isEqualTo("1\n");
    assertThat(http.post("SELECT getSetting('max_threads')").body()).isEqualTo(defaultThreads);

    // a SET without a session changes nothing for the next request
    assertThat(http.post("SET max_threads = 1").status()).isEqualTo(200);
    assertThat(http.post("SELECT getSetting('max_threads')").body()).isEqualTo(defaultThreads);

    // readonly=1 on one request refuses its DDL and leaves the next request writable
    Http.Reply refused =
        http.post(Map.of("readonly", "1"), "CREATE TABLE t (a UInt8) ENGINE = Memory");
    assertThat(refused.header("X-ClickHouse-Exception-Code")).isEqualTo("164");
    assertThat(http.post("CREATE TABLE t (a UInt8) ENGINE = Memory").status()).isEqualTo(200);

    // an unknown setting is refused as ClickHouse refuses it, and poisons nothing
    Http.Reply unknown = http.post(Map.of("no_such_setting", "1"), "SELECT 1");
    assertThat(unknown.status()).isEqualTo(404);
    assertThat(unknown.body()).contains("(UNKNOWN_SETTING)");
    assertThat(http.post("SELECT 1").body()).isEqualTo("1\n");
  }

  @Test
  void temporaryTablesAndUseStayInTheirRequest() throws Exception {
    assertThat(http.post("CREATE TEMPORARY TABLE tmp (a UInt8)").status()).isEqualTo(200);
    assertThat(http.post("SELECT count() FROM tmp").status()).isEqualTo(404);
    assertThat(http.post("CREATE DATABASE other").status()).isEqualTo(200);
    assertThat(http.post("USE other").status()).isEqualTo(200);
    assertThat(http.post("SELECT currentDatabase()").body()).isEqualTo("default\n");
    // the database parameter applies to its request
    assertThat(http.post(Map.of("database", "other"), "SELECT currentDatabase()").body())
        .isEqualTo("other\n");
    assertThat(http.post("SELECT currentDatabase()").body()).isEqualTo("default\n");
  }

  @Test
  void sessionsKeepTheirOwnState() throws Exception {
    Map<String, String> s1 = Map.of("session_id", "s1");
    Map<String, String> s2 = Map.of("session_id", "s2");
    assertThat(http.post(s1, "SET max_threads = 1").status()).isEqualTo(200);
    assertThat(http.post(s1, "CREATE TEMPORARY TABLE tmp (a UInt8)").status()).isEqualTo(200);
    assertThat(http.post(s1, "INSERT INTO tmp VALUES (7)").status()).isEqualTo(200);
    assertThat(http.post(s1, "CREATE DATABASE IF NOT EXISTS other").status()).isEqualTo(200);
    assertThat(http.post(s1, "USE other").status()).isEqualTo(200);

    assertThat(
            http.post(
                    s1,
                    "SELECT getSetting('max_threads'), currentDatabase(), (SELECT sum(a) FROM tmp)")
                .body())
        .isEqualTo("1\tother\t7\n");
    String defaults = http.post("SELECT getSetting('max_threads')").body();
    assertThat(defaults).isNotEqualTo("1\n");
    assertThat(http.post(s2, "SELECT getSetting('max_threads'), currentDatabase()").body())
        .isEqualTo(defaults.strip() + "\tdefault\n");
    assertThat(http.post(s2, "SELECT count() FROM tmp").status()).isEqualTo(404);

    // a request's own settings apply to it, then the session's come back
    assertThat(
            http.post(
                    Map.of("session_id", "s1", "max_threads", "3"),
                    "SELECT getSetting('max_threads')")
                .body())
        .isEqualTo("3\n");
    assertThat(http.post(s1, "SELECT getSetting('max_threads')").body()).isEqualTo("1\n");
    // and a request's database too
    assertThat(
            http.post(Map.of("session_id", "s1", "database", "default"), "SELECT currentDatabase()")
                .body())
        .isEqualTo("default\n");
    assertThat(http.post(s1, "SELECT currentDatabase()").body()).isEqualTo("other\n");

    // parameters SET in a session stay for its later queries; a request's own apply to it alone
    assertThat(http.post(s1, "SET param_p = 'kept'").status()).isEqualTo(200);
    assertThat(http.post(s1, "SELECT {p:String}").body()).isEqualTo("kept\n");
    assertThat(http.post(Map.of("session_id", "s2", "param_p", "mine"), "SELECT {p:String}").body())
        .isEqualTo("mine\n");
    assertThat(http.post(s2, "SELECT {p:String}").header("X-ClickHouse-Exception-Code"))
        .isEqualTo("456");

    Http.Reply missing = http.post(Map.of("session_id", "nope", "session_check", "1"), "SELECT 1");
    assertThat(missing.header("X-ClickHouse-Exception-Code")).isEqualTo("372");
    assertThat(missing.body()).contains("(SESSION_NOT_FOUND)");
  }

  @Test
  void aSessionServesOneRequestAtATime() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Http.Reply> longOne =
          pool.submit(
              () ->
                  http.post(
                      Map.of("session_id", "busy", "query_id", "busy-1"), StoreFixture.LONG_QUERY));
      waitUntilRunning("busy-1");
      Http.Reply second = http.post(Map.of("session_id", "busy"), "SELECT 1");
      assertThat(second.header("X-ClickHouse-Exception-Code")).isEqualTo("373");
      assertThat(second.body()).contains("(SESSION_IS_LOCKED)");
      http.post("KILL QUERY WHERE query_id = 'busy-1' SYNC");
      assertThat(longOne.get().header("X-ClickHouse-Exception-Code")).isEqualTo("394");
    } finally {
      pool.shutdownNow();
    }
  }

  private void waitUntilRunning(String queryId) throws Exception {
    HttpConcurrencyTest.awaitAdmitted(http, queryId);
    HttpConcurrencyTest.awaitRunningLong(http, "1");
  }

  @Test
  void getOnlyReads() throws Exception {
    assertThat(http.post("CREATE TABLE keep (a UInt8) ENGINE = MergeTree ORDER BY a").status())
        .isEqualTo(200);
    for (String write :
        List.of(
            "DROP TABLE keep",
            "CREATE TABLE made (a UInt8) ENGINE = Memory",
            "INSERT INTO keep VALUES (1)",
            "TRUNCATE TABLE keep",
            "INSERT INTO FUNCTION file('"
                + dir.resolve("x.tsv")
                + "', 'TSV', 'a UInt8') VALUES (1)",
            "SELECT 1 INTO OUTFILE '" + dir.resolve("out.tsv") + "'",
            "OPTIMIZE TABLE keep")) {
      Http.Reply r = http.get(Map.of("query", write));
      assertThat(r.status()).as(write).isEqualTo(500);
      assertThat(r.header("X-ClickHouse-Exception-Code")).as(write).isEqualTo("164");
      assertThat(r.body())
          .as(write)
          .contains("method GET implies readonly")
          .endsWith("(READONLY)\n");
    }
    assertThat(http.get(Map.of("query", "EXISTS TABLE keep")).body()).isEqualTo("1\n");
    assertThat(http.get(Map.of("query", "EXISTS TABLE made")).body()).isEqualTo("0\n");
    assertThat(http.post("SELECT count() FROM keep").body()).isEqualTo("0\n");
    assertThat(dir.resolve("x.tsv")).doesNotExist();
    assertThat(dir.resolve("out.tsv")).doesNotExist();
    // reading works, with settings (readonly=2, as ClickHouse's GET), and in a session
    assertThat(
            http.get(Map.of("query", "SELECT getSetting('max_threads')", "max_threads", "1"))
                .body())
        .isEqualTo("1\n");
    assertThat(http.get(Map.of("query", "SELECT 1", "session_id", "g")).body()).isEqualTo("1\n");
    assertThat(
            http.get(Map.of("query", "DROP TABLE keep", "session_id", "g"))
                .header("X-ClickHouse-Exception-Code"))
        .isEqualTo("164");
    // and the next POST writes as before
    assertThat(http.post("DROP TABLE keep").status()).isEqualTo(200);
  }
}
