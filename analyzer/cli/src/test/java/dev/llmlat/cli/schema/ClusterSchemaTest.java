package dev.llmlat.cli.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.cli.Llmlat;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.Migration;
import dev.llmlat.store.schema.SchemaMigrator;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster variant of the schema (schemas/clickhouse/cluster): every statement parses in the
 * real engine (there is no cluster here to run it on), and every single-node table, view and
 * setting has its counterpart: a replicated {@code *_local} table with the same columns, indexes,
 * keys and settings, and a Distributed table with the user-facing name over it.
 */
class ClusterSchemaTest {
  static final String CLUSTER = "llmlat_test";
  static final Pattern CREATE_TABLE = Pattern.compile("CREATE TABLE IF NOT EXISTS (\\w+)");
  static final Pattern CREATE_VIEW =
      Pattern.compile(
          "CREATE MATERIALIZED VIEW IF NOT EXISTS (\\w+)(?: ON CLUSTER '[^']*')?\\s+TO (\\w+)");
  static final Pattern FROM = Pattern.compile("\\bFROM (\\w+)");
  static final Pattern ALTER_SETTING =
      Pattern.compile("ALTER TABLE (\\w+)(?: ON CLUSTER '[^']*')? MODIFY SETTING (\\w+) = (\\d+)");

  @TempDir static Path dir;
  static EmbeddedClickHouse engine;

  @BeforeAll
  static void open() {
    engine = EmbeddedClickHouse.open(dir, EngineLibrary.locate());
  }

  @AfterAll
  static void close() {
    engine.close();
  }

  static List<String> statements(SchemaMigrator migrator) {
    List<String> all = new ArrayList<>();
    migrator.migrations().forEach(m -> all.addAll(migrator.statements(m)));
    return all;
  }

  /** The engine's syntax tree of a statement, one node per line, indented by depth. */
  static List<String> ast(String statement) {
    return engine.query("EXPLAIN AST " + statement).rows().stream().map(r -> r.get(0)).toList();
  }

  /** The subtree under the node line starting (after its indentation) with {@code node}. */
  static List<String> subtree(List<String> ast, String node) {
    for (int i = 0; i < ast.size(); i++) {
      String line = ast.get(i);
      int depth = line.length() - line.stripLeading().length();
      if (line.stripLeading().startsWith(node)) {
        List<String> sub = new ArrayList<>();
        for (int j = i + 1;
            j < ast.size() && ast.get(j).length() - ast.get(j).stripLeading().length() > depth;
            j++) {
          sub.add(ast.get(j));
        }
        return sub;
      }
    }
    throw new AssertionError("no " + node + " in\n" + String.join("\n", ast));
  }

  static Map<String, String> tables(List<String> statements) {
    Map<String, String> byName = new LinkedHashMap<>();
    for (String s : statements) {
      Matcher m = CREATE_TABLE.matcher(s);
      if (m.find()) {
        byName.put(m.group(1), s);
      }
    }
    return byName;
  }

  @Test
  void everyClusterStatementParsesAndRunsOnTheNamedCluster() {
    List<String> cluster = statements(SchemaMigrator.bundledForCluster(CLUSTER));
    assertThat(cluster).hasSizeGreaterThanOrEqualTo(statements(SchemaMigrator.bundled()).size());
    for (String statement : cluster) {
      assertThat(ast(statement)).as(statement).isNotEmpty();
      assertThat(statement)
          .as("distributed DDL")
          .contains("ON CLUSTER '" + CLUSTER + "'")
          .doesNotContain("{cluster}");
    }
  }

  @Test
  void everySingleNodeTableHasAReplicatedLocalTableWithTheSameColumnsAndADistributedOne() {
    Map<String, String> single = tables(statements(SchemaMigrator.bundled()));
    Map<String, String> cluster = tables(statements(SchemaMigrator.bundledForCluster(CLUSTER)));
    assertThat(single).isNotEmpty();
    for (Map.Entry<String, String> table : single.entrySet()) {
      String name = table.getKey();
      List<String> singleAst = ast(table.getValue());
      assertThat(cluster).as("cluster tables").containsKeys(name + "_local", name);

      List<String> localAst = ast(cluster.get(name + "_local"));
      assertThat(subtree(localAst, "Columns definition"))
          .as(name + "_local columns, codecs, indexes")
          .isEqualTo(subtree(singleAst, "Columns definition"));
      List<String> singleStorage = subtree(singleAst, "Storage definition");
      List<String> localStorage = subtree(localAst, "Storage definition");
      String engineName = singleStorage.get(0).strip().split(" ")[1];
      assertThat(localStorage.get(0).strip())
          .as(name + "_local engine")
          .startsWith("Function Replicated" + engineName + " ");
      assertThat(stripped(subtree(localStorage, "Function Replicated" + engineName)))
          .as(name + "_local engine arguments")
          .contains(
              "Literal '/clickhouse/tables/{shard}/{database}/{table}'", "Literal '{replica}'");
      assertThat(withoutEngine(localStorage))
          .as(name + "_local partitioning, keys and settings")
          .isEqualTo(withoutEngine(singleStorage));

      String distributed = cluster.get(name);
      assertThat(distributed).as(name).contains(" AS " + name + "_local\n");
      List<String> engineArgs =
          stripped(
              subtree(subtree(ast(distributed), "Storage definition"), "Function Distributed"));
      assertThat(engineArgs)
          .as(name + " engine")
          .startsWith(
              "ExpressionList (children 4)",
              "Literal '" + CLUSTER + "'",
              "Function currentDatabase (children 1)",
              "ExpressionList",
              "Identifier " + name + "_local");
      assertThat(engineArgs.get(5))
          .as(name + " sharding key is a function of the row, never rand()")
          .startsWith("Function cityHash64");
    }
  }

  static List<String> stripped(List<String> lines) {
    return lines.stream().map(String::strip).toList();
  }

  /** A storage definition without its engine node (the first) and that node's subtree. */
  static List<String> withoutEngine(List<String> storage) {
    int engineLines = 1 + subtree(storage, storage.get(0).strip()).size();
    return storage.subList(engineLines, storage.size());
  }

  @Test
  void materializedViewsAndSettingsHaveTheirClusterCounterparts() {
    List<String> single = statements(SchemaMigrator.bundled());
    List<String> cluster = statements(SchemaMigrator.bundledForCluster(CLUSTER));
    for (String view : single) {
      Matcher v = CREATE_VIEW.matcher(view);
      if (!v.find()) {
        continue;
      }
      Matcher source = FROM.matcher(view);
      assertThat(source.find()).isTrue();
      String counterpart =
          cluster.stream()
              .filter(s -> s.contains("MATERIALIZED VIEW IF NOT EXISTS " + v.group(1) + " "))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no cluster variant of " + v.group(1)));
      // each shard's view reads the spans stored on that shard and writes that shard's rows
      assertThat(counterpart)
          .contains("TO " + v.group(2) + "_local\n")
          .contains("FROM " + source.group(1) + "_local\n");
      assertThat(subtree(ast(counterpart), "SelectWithUnionQuery"))
          .isEqualTo(
              subtree(
                  ast(
                      view.replace(
                          "FROM " + source.group(1) + "\n",
                          "FROM " + source.group(1) + "_local\n")),
                  "SelectWithUnionQuery"));
    }
    for (String alter : single) {
      Matcher a = ALTER_SETTING.matcher(alter);
      if (a.find()) {
        assertThat(a.group(2)).isEqualTo("non_replicated_deduplication_window");
        assertThat(cluster)
            .as("cluster variant of " + alter)
            .anyMatch(
                s ->
                    s.contains(
                        "ALTER TABLE "
                            + a.group(1)
                            + "_local ON CLUSTER '"
                            + CLUSTER
                            + "' MODIFY SETTING replicated_deduplication_window = "
                            + a.group(3)));
      }
    }
  }

  @Test
  void bothVariantsListTheSameMigrationsAndChecksumsDoNotDependOnTheClusterName() {
    List<String> single =
        SchemaMigrator.bundled().migrations().stream()
            .map(m -> m.version() + "_" + m.name())
            .toList();
    SchemaMigrator a = SchemaMigrator.bundledForCluster("a");
    assertThat(a.migrations().stream().map(m -> m.version() + "_" + m.name()).toList())
        .isEqualTo(single);
    assertThat(a.migrations().stream().map(Migration::checksum).toList())
        .isEqualTo(
            SchemaMigrator.bundledForCluster("prod.eu-1").migrations().stream()
                .map(Migration::checksum)
                .toList())
        .doesNotContainAnyElementsOf(
            SchemaMigrator.bundled().migrations().stream().map(Migration::checksum).toList());
  }

  @Test
  void aBadClusterNameOrAnEmbeddedStoreIsRefused() {
    assertThatThrownBy(() -> SchemaMigrator.bundledForCluster("x' ON CLUSTER 'y"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--cluster: not a ClickHouse cluster name");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        Llmlat.run(
            new String[] {
              "migrate", "--cluster", "c1", "--data-dir", dir.resolve("other").toString()
            },
            new PrintWriter(out, true),
            new PrintWriter(err, true));
    assertThat(exit).isEqualTo(2);
    assertThat(err.toString())
        .contains("--cluster needs a ClickHouse server of that cluster (--clickhouse-url)");
  }
}
