package dev.llmlat.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.llmlat.store.QueryResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.regex.Pattern;

/** Prints a {@link QueryResult} as an aligned table, TSV or JSON. */
final class ResultPrinter {
  enum Format { table, tsv, json }

  private static final Pattern NUMERIC =
      Pattern.compile("(Nullable\\()?(U?Int(8|16|32|64|128|256)|Float(32|64)|Decimal.*)\\)?");
  private static final Pattern SMALL_INT = Pattern.compile("(Nullable\\()?(U?Int(8|16|32)|Float(32|64))\\)?");
  private static final Pattern BOOL = Pattern.compile("(Nullable\\()?Bool\\)?");

  private ResultPrinter() {}

  static void print(QueryResult result, Format format, PrintWriter out) {
    switch (format) {
      case table -> table(result, out);
      case tsv -> tsv(result, out);
      case json -> json(result, out);
    }
    out.flush();
  }

  static String toTable(QueryResult result) {
    StringWriter s = new StringWriter();
    table(result, new PrintWriter(s));
    return s.toString();
  }

  private static void table(QueryResult result, PrintWriter out) {
    List<QueryResult.Column> columns = result.columns();
    if (columns.isEmpty()) {
      out.println("OK");
      return;
    }
    int[] widths = new int[columns.size()];
    boolean[] right = new boolean[columns.size()];
    for (int i = 0; i < columns.size(); i++) {
      widths[i] = columns.get(i).name().length();
      right[i] = NUMERIC.matcher(columns.get(i).type()).matches();
    }
    for (List<String> row : result.rows()) {
      for (int i = 0; i < row.size(); i++) {
        widths[i] = Math.max(widths[i], cell(row.get(i)).length());
      }
    }
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < columns.size(); i++) {
      pad(line, columns.get(i).name(), widths[i], right[i], i);
    }
    out.println(line.toString().stripTrailing());
    line.setLength(0);
    for (int i = 0; i < columns.size(); i++) {
      line.append(i == 0 ? "" : "  ").append("-".repeat(widths[i]));
    }
    out.println(line);
    for (List<String> row : result.rows()) {
      line.setLength(0);
      for (int i = 0; i < row.size(); i++) {
        pad(line, cell(row.get(i)), widths[i], right[i], i);
      }
      out.println(line.toString().stripTrailing());
    }
    out.println("(" + result.rows().size() + (result.rows().size() == 1 ? " row)" : " rows)"));
  }

  private static String cell(String value) {
    if (value == null) {
      return "NULL";
    }
    return value.replace("\n", "\\n").replace("\t", "\\t");
  }

  private static void pad(StringBuilder line, String value, int width, boolean right, int index) {
    if (index > 0) {
      line.append("  ");
    }
    String padding = " ".repeat(width - value.length());
    line.append(right ? padding + value : value + padding);
  }

  private static void tsv(QueryResult result, PrintWriter out) {
    out.println(String.join("\t", result.columns().stream().map(QueryResult.Column::name).toList()));
    for (List<String> row : result.rows()) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.size(); i++) {
        line.append(i == 0 ? "" : "\t").append(row.get(i) == null ? "\\N" : row.get(i)
            .replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n"));
      }
      out.println(line);
    }
  }

  /** An array of objects; 64-bit and wider integers stay strings, as ClickHouse's JSON formats quote them. */
  private static void json(QueryResult result, PrintWriter out) {
    ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    try {
      JsonGenerator g = mapper.getFactory().createGenerator(out).useDefaultPrettyPrinter();
      g.writeStartArray();
      for (List<String> row : result.rows()) {
        g.writeStartObject();
        for (int i = 0; i < row.size(); i++) {
          QueryResult.Column column = result.columns().get(i);
          String v = row.get(i);
          g.writeFieldName(column.name());
          if (v == null) {
            g.writeNull();
          } else if (SMALL_INT.matcher(column.type()).matches() && !v.equals("nan") && !v.contains("inf")) {
            g.writeNumber(v);
          } else if (BOOL.matcher(column.type()).matches()) {
            g.writeBoolean(v.equals("true"));
          } else {
            g.writeString(v);
          }
        }
        g.writeEndObject();
      }
      g.writeEndArray();
      g.flush();
      out.println();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
