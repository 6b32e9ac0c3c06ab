package dev.llmlat.attribution;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads an array attribute as the decoders hand it over: OTLP arrays are stored as JSON text (by
 * the ingester and by the Collector's ClickHouse exporter alike). Elements are read as text, as a
 * JSON reader's {@code asText} would: strings unescaped, numbers and booleans as written, nested
 * arrays and objects as the empty string. The core reads only such arrays (trace ids, token
 * deltas), so this is the whole of JSON it needs; anything else is no array and reads as none.
 */
final class ArrayAttributeText {
  private final String text;
  private int at;

  private ArrayAttributeText(String text) {
    this.text = text;
  }

  static List<String> parse(String text) {
    try {
      return new ArrayAttributeText(text).array();
    } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
      return List.of();
    }
  }

  private List<String> array() {
    List<String> out = new ArrayList<>();
    expect('[');
    if (peek() == ']') {
      at++;
    } else {
      do {
        out.add(value());
      } while (next() == ',');
      at--;
      expect(']');
    }
    if (skipSpace() != text.length()) {
      throw new IllegalArgumentException("text after the array");
    }
    return out;
  }

  private String value() {
    char c = peek();
    if (c == '"') {
      return string();
    }
    if (c == '[' || c == '{') {
      skipContainer();
      return "";
    }
    int start = at;
    while (at < text.length() && ",]} \t\r\n".indexOf(text.charAt(at)) < 0) {
      at++;
    }
    String scalar = text.substring(start, at);
    if (scalar.equals("null")) {
      return "null";
    }
    if (!scalar.equals("true") && !scalar.equals("false")) {
      Double.parseDouble(scalar); // a number, or no JSON
    }
    return scalar;
  }

  private String string() {
    at++;
    StringBuilder sb = new StringBuilder();
    while (true) {
      char c = text.charAt(at++);
      if (c == '"') {
        return sb.toString();
      }
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      char e = text.charAt(at++);
      switch (e) {
        case '"', '\\', '/' -> sb.append(e);
        case 'b' -> sb.append('\b');
        case 'f' -> sb.append('\f');
        case 'n' -> sb.append('\n');
        case 'r' -> sb.append('\r');
        case 't' -> sb.append('\t');
        case 'u' -> {
          sb.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          at += 4;
        }
        default -> throw new IllegalArgumentException("bad escape");
      }
    }
  }

  /** Skips a nested array or object, minding strings (brackets inside them do not count). */
  private void skipContainer() {
    int depth = 0;
    do {
      char c = text.charAt(at);
      if (c == '"') {
        string();
        continue;
      }
      if (c == '[' || c == '{') {
        depth++;
      } else if (c == ']' || c == '}') {
        depth--;
      }
      at++;
    } while (depth > 0);
  }

  private int skipSpace() {
    while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
      at++;
    }
    return at;
  }

  private char peek() {
    skipSpace();
    return text.charAt(at);
  }

  private char next() {
    char c = peek();
    at++;
    return c;
  }

  private void expect(char c) {
    if (next() != c) {
      throw new IllegalArgumentException("expected " + c);
    }
  }
}
