package dev.llmlat.store;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The rows of one query as text (ClickHouse's own text rendering of each value; {@code null} for
 * SQL NULL), with the columns' names and ClickHouse types.
 */
public record QueryResult(List<Column> columns, List<List<String>> rows) {

  /** One result column: its name and its ClickHouse type (for example {@code DateTime64(9)}). */
  public record Column(String name, String type) {}

  public QueryResult {
    columns = List.copyOf(columns);
    List<List<String>> copy = new ArrayList<>(rows.size());
    for (List<String> row : rows) {
      if (row.size() != columns.size()) {
        throw new IllegalArgumentException(
            "row has " + row.size() + " values for " + columns.size() + " columns");
      }
      copy.add(Collections.unmodifiableList(new ArrayList<>(row)));
    }
    rows = Collections.unmodifiableList(copy);
  }

  /** The single value of a one-row, one-column result (such as {@code SELECT count()}). */
  public String single() {
    if (rows.size() != 1 || columns.size() != 1) {
      throw new IllegalStateException(
          "expected one value, got " + rows.size() + " rows x " + columns.size() + " columns");
    }
    return rows.get(0).get(0);
  }

  /** The values of one column, by name. */
  public List<String> column(String name) {
    int index = -1;
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equals(name)) {
        index = i;
        break;
      }
    }
    if (index < 0) {
      throw new IllegalArgumentException("no column " + name + " in " + columns);
    }
    List<String> values = new ArrayList<>(rows.size());
    for (List<String> row : rows) {
      values.add(row.get(index));
    }
    return values;
  }
}
