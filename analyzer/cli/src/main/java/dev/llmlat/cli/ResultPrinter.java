package dev.llmlat.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.llmlat.store.QueryResult;
import dev.llmlat.store.RowStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Prints a result as an aligned table, TSV or JSON, row by row as the rows arrive: what is written
 * goes out before the printer waits for more, and nothing but a block of table rows is held.
 */
final class ResultPrinter {
  enum Format {
    table,
    tsv,
    json
  }

  /**
   * Rows a streamed table aligns at once: their widths hold for the rest, widened where a later row
   * needs more.
   */
  static final int TABLE_BLOCK = 1000;

  /** Rows written between two checks that the reader is still there. */
  private static final int CHECK_EVERY = 8192;

  private static final Pattern NUMERIC =
      Pattern.compile("(Nullable\\()?(U?Int(8|16|32|64|128|256)|Float(32|64)|Decimal.*)\\)?");
  private static final Pattern SMALL_INT =
      Pattern.compile("(Nullable\\()?(U?Int(8|16|32)|Float(32|64))\\)?");
  private static final Pattern BOOL = Pattern.compile("(Nullable\\()?Bool\\)?");

  /** The output's reader went away (a closed pipe, as under {@code | head}): stop, say nothing. */
  static final class OutputClosed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    OutputClosed() {
      super("the output was closed", null, false, false);
    }
  }

  private ResultPrinter() {}

  /** A whole result: a table is aligned over all its rows. */
  static void print(QueryResult result, Format format, PrintWriter out) {
    print(RowStream.of(result), format, out, Integer.MAX_VALUE);
  }

  /**
   * Streams {@code rows}; a table aligns each {@link #TABLE_BLOCK} rows' worth at first. Throws
   * {@link OutputClosed} when the reader went away; returns the rows printed.
   */
  static long print(RowStream rows, Format format, PrintWriter out) {
    return print(rows, format, out, TABLE_BLOCK);
  }

  private static long print(RowStream rows, Format format, PrintWriter out, int tableBlock) {
    Output o = new Output(rows, out);
    long n =
        switch (format) {
          case table -> table(rows, o, tableBlock);
          case tsv -> tsv(rows, o);
          case json -> json(rows, o);
        };
    o.check();
    return n;
  }

  static String toTable(QueryResult result) {
    StringWriter s = new StringWriter();
    print(result, Format.table, new PrintWriter(s));
    return s.toString();
  }

  /**
   * Flushes before the stream would wait, and every so often, checking the reader is still there.
   */
  private static final class Output {
    final RowStream rows;
    final PrintWriter out;
    int sinceCheck;

    Output(RowStream rows, PrintWriter out) {
      this.rows = rows;
      this.out = out;
    }

    /** After each row. */
    void rowWritten(JsonGenerator g) throws IOException {
      if (++sinceCheck >= CHECK_EVERY || !rows.rowReady()) {
        if (g != null) {
          g.flush();
        }
        check();
      }
    }

    void check() {
      sinceCheck = 0;
      if (out.checkError()) { // flushes; a PrintWriter keeps an I/O error to itself until asked
        throw new OutputClosed();
      }
    }
  }

  private static long table(RowStream rows, Output o, int block) {
    PrintWriter out = o.out;
    List<QueryResult.Column> columns = rows.columns();
    if (columns.isEmpty()) {
      out.println("OK");
      return 0;
    }
    int[] widths = new int[columns.size()];
    boolean[] right = new boolean[columns.size()];
    for (int i = 0; i < columns.size(); i++) {
      widths[i] = columns.get(i).name().length();
      right[i] = NUMERIC.matcher(columns.get(i).type()).matches();
    }
    // the first block sets the widths: all of it arrives before the header is written, unless the
    // stream would wait for the rest (a slow query shows its rows as they come)
    List<List<String>> first = new ArrayList<>();
    List<String> row = null;
    while (first.size() < block
        && (first.isEmpty() || o.rows.rowReady())
        && (row = rows.next()) != null) {
      first.add(row);
    }
    for (List<String> r : first) {
      for (int i = 0; i < r.size(); i++) {
        widths[i] = Math.max(widths[i], cell(r.get(i)).length());
      }
    }
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < columns.size(); i++) {
      pad(line, columns.get(i).name(), widths[i], right[i], i);
    }
    out.print(line.toString().stripTrailing());
    out.print('\n');
    line.setLength(0);
    for (int i = 0; i < columns.size(); i++) {
      line.append(i == 0 ? "" : "  ").append("-".repeat(widths[i]));
    }
    out.print(line);
    out.print('\n');
    long count = 0;
    try {
      for (List<String> r : first) {
        tableRow(r, widths, right, line, out);
        count++;
      }
      first = null;
      if (row != null) {
        o.check(); // the first block is out before the first wait
        while ((row = rows.next()) != null) {
          for (int i = 0; i < row.size(); i++) {
            widths[i] = Math.max(widths[i], cell(row.get(i)).length()); // widened from here on
          }
          tableRow(row, widths, right, line, out);
          count++;
          o.rowWritten(null);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    out.print("(" + count + (count == 1 ? " row)" : " rows)"));
    out.print('\n');
    return count;
  }

  private static void tableRow(
      List<String> row, int[] widths, boolean[] right, StringBuilder line, PrintWriter out) {
    line.setLength(0);
    for (int i = 0; i < row.size(); i++) {
      pad(line, cell(row.get(i)), widths[i], right[i], i);
    }
    out.print(line.toString().stripTrailing());
    out.print('\n');
  }

  private static String cell(String value) {
    if (value == null) {
      return "NULL";
    }
    return value.indexOf('\n') < 0 && value.indexOf('\t') < 0
        ? value
        : value.replace("\n", "\\n").replace("\t", "\\t");
  }

  private static void pad(StringBuilder line, String value, int width, boolean right, int index) {
    if (index > 0) {
      line.append("  ");
    }
    int padding = width - value.length();
    if (right) {
      line.repeat(' ', padding).append(value);
    } else {
      line.append(value).repeat(' ', padding);
    }
  }

  private static long tsv(RowStream rows, Output o) {
    PrintWriter out = o.out;
    out.print(String.join("\t", rows.columns().stream().map(QueryResult.Column::name).toList()));
    out.print('\n');
    StringBuilder line = new StringBuilder();
    long count = 0;
    try {
      for (List<String> row; (row = rows.next()) != null; ) {
        line.setLength(0);
        for (int i = 0; i < row.size(); i++) {
          if (i > 0) {
            line.append('\t');
          }
          escapeTsv(line, row.get(i));
        }
        line.append('\n');
        out.append(line);
        count++;
        o.rowWritten(null);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return count;
  }

  private static void escapeTsv(StringBuilder line, String v) {
    if (v == null) {
      line.append("\\N");
      return;
    }
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      switch (c) {
        case '\\' -> line.append("\\\\");
        case '\t' -> line.append("\\t");
        case '\n' -> line.append("\\n");
        default -> line.append(c);
      }
    }
  }

  /**
   * An array of objects, written as the rows arrive (valid JSON once the last row is out); 64-bit
   * and wider integers stay strings, as ClickHouse's JSON formats quote them.
   */
  private static long json(RowStream rows, Output o) {
    ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    List<QueryResult.Column> columns = rows.columns();
    boolean[] number = new boolean[columns.size()];
    boolean[] bool = new boolean[columns.size()];
    for (int i = 0; i < columns.size(); i++) {
      number[i] = SMALL_INT.matcher(columns.get(i).type()).matches();
      bool[i] = BOOL.matcher(columns.get(i).type()).matches();
    }
    long count = 0;
    try {
      JsonGenerator g = mapper.getFactory().createGenerator(o.out).useDefaultPrettyPrinter();
      g.writeStartArray();
      for (List<String> row; (row = rows.next()) != null; ) {
        g.writeStartObject();
        for (int i = 0; i < row.size(); i++) {
          String v = row.get(i);
          g.writeFieldName(columns.get(i).name());
          if (v == null) {
            g.writeNull();
          } else if (number[i] && !v.equals("nan") && !v.contains("inf")) {
            g.writeNumber(v);
          } else if (bool[i]) {
            g.writeBoolean(v.equals("true"));
          } else {
            g.writeString(v);
          }
        }
        g.writeEndObject();
        count++;
        o.rowWritten(g);
      }
      g.writeEndArray();
      g.flush();
      o.out.print('\n');
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return count;
  }
}
