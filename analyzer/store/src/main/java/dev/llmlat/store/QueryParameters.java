package dev.llmlat.store;

import java.util.regex.Pattern;

/**
 * ClickHouse query parameters ({@code {name:Type}} placeholders) as both stores pass them: the
 * server's HTTP interface as {@code param_name=value}, the embedded engine beside the statement
 * ({@code chdb_query_with_params}). Either way the value is text in ClickHouse's escaped format,
 * parsed by the engine as the placeholder's type; it never becomes SQL.
 */
public final class QueryParameters {
  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");

  private QueryParameters() {}

  /** The parameter's name, checked: it becomes part of a setting's name. */
  static String name(String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("not a query parameter name: '" + name + "'");
    }
    return name;
  }

  /**
   * The value as ClickHouse reads a parameter: escaped format, where a backslash, tab or newline in
   * a string must be escaped (a raw tab would end the value).
   */
  static String escaped(Object value) {
    if (value == null) {
      return "\\N";
    }
    String text = value.toString();
    StringBuilder out = new StringBuilder(text.length() + 8);
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '\\' -> out.append("\\\\");
        case '\t' -> out.append("\\t");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\0' -> out.append("\\0");
        default -> out.append(c);
      }
    }
    return out.toString();
  }
}
