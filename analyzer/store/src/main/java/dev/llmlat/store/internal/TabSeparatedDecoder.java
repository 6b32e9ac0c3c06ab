package dev.llmlat.store.internal;

import dev.llmlat.store.QueryResult;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Decodes ClickHouse's {@code TabSeparatedWithNamesAndTypes} output into a {@link QueryResult}. */
public final class TabSeparatedDecoder {
  private TabSeparatedDecoder() {}

  public static QueryResult decode(byte[] bytes) {
    String text = new String(bytes, StandardCharsets.UTF_8);
    List<List<String>> lines = new ArrayList<>();
    int start = 0;
    while (start < text.length()) {
      int end = text.indexOf('\n', start);
      if (end < 0) {
        end = text.length();
      }
      lines.add(splitFields(text, start, end));
      start = end + 1;
    }
    if (lines.size() < 2) {
      return new QueryResult(List.of(), List.of()); // statements without a result set
    }
    List<String> names = lines.get(0);
    List<String> types = lines.get(1);
    List<QueryResult.Column> columns = new ArrayList<>(names.size());
    for (int i = 0; i < names.size(); i++) {
      columns.add(new QueryResult.Column(names.get(i), types.get(i)));
    }
    return new QueryResult(columns, lines.subList(2, lines.size()));
  }

  private static List<String> splitFields(String text, int start, int end) {
    List<String> fields = new ArrayList<>();
    StringBuilder field = new StringBuilder();
    boolean escaped = false;
    for (int i = start; i < end; i++) {
      char c = text.charAt(i);
      if (c == '\t') {
        fields.add(finish(field, escaped));
        field.setLength(0);
        escaped = false;
      } else if (c == '\\' && i + 1 < end) {
        char next = text.charAt(++i);
        escaped = true;
        switch (next) {
          case 'n' -> field.append('\n');
          case 't' -> field.append('\t');
          case 'r' -> field.append('\r');
          case 'b' -> field.append('\b');
          case 'f' -> field.append('\f');
          case '0' -> field.append('\0');
          case 'N' -> field.append("\\N"); // NULL marker, resolved in finish()
          default -> field.append(next); // \\ \' and any other escaped character
        }
      } else {
        field.append(c);
      }
    }
    fields.add(finish(field, escaped));
    return fields;
  }

  private static String finish(StringBuilder field, boolean escaped) {
    if (escaped && field.length() == 2 && field.charAt(0) == '\\' && field.charAt(1) == 'N') {
      return null;
    }
    return field.toString();
  }
}
