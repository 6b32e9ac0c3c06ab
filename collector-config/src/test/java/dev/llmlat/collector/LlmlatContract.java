package dev.llmlat.collector;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * llmlat's side of the contract, read from the schemas module (the jar this module tests against),
 * so a renamed topic or table fails here before a user's Collector writes elsewhere.
 */
final class LlmlatContract {
  private LlmlatContract() {}

  static final String TOPIC = "otlp_spans";
  static final String ENCODING = "otlp_proto";
  static final String TRACES_TABLE = "otel_traces";

  static final String TOPIC_README = "schemas/kafka/README.md";
  static final String TRACES_DDL = "schemas/clickhouse/0001_otel_traces.sql";

  /** The first topic the topic contract describes (its first {@code ## `name`} heading). */
  static String topicFromContract() {
    Matcher m = Pattern.compile("(?m)^## `([a-z0-9_.-]+)`").matcher(resource(TOPIC_README));
    if (!m.find()) {
      throw new AssertionError(TOPIC_README + " names no topic");
    }
    return m.group(1);
  }

  /** The table the first CREATE TABLE of the traces migration creates. */
  static String tableFromDdl() {
    Matcher m =
        Pattern.compile("CREATE TABLE IF NOT EXISTS (\\w+) \\(").matcher(resource(TRACES_DDL));
    if (!m.find()) {
      throw new AssertionError(TRACES_DDL + " creates no table");
    }
    return m.group(1);
  }

  /**
   * The insertable columns of otel_traces; a Nested column N contributes N.field for each field.
   */
  static Set<String> tracesColumns() {
    String ddl = resource(TRACES_DDL);
    String body = ddl.substring(ddl.indexOf('(') + 1, ddl.indexOf(") ENGINE"));
    Set<String> columns = new LinkedHashSet<>();
    String nested = null;
    for (String line : body.split("\n")) {
      String t = line.trim();
      if (t.isEmpty() || t.startsWith("INDEX") || t.startsWith("--") || t.contains(" ALIAS ")) {
        continue;
      }
      if (nested != null) {
        if (t.startsWith(")")) {
          nested = null;
        } else {
          columns.add(nested + "." + t.split("\\s+")[0]);
        }
        continue;
      }
      String name = t.split("\\s+")[0];
      if (t.startsWith(name + " Nested")) {
        nested = name;
      } else {
        columns.add(name);
      }
    }
    return columns;
  }

  static String resource(String name) {
    try (InputStream in = LlmlatContract.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new AssertionError(name + " is not on the test class path (llmlat-schemas)");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
