package dev.llmlat.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The samples of an OpenMetrics 1.0 text exposition, with their exemplars (comments and metadata
 * skipped).
 */
record OpenMetricsText(List<Sample> samples) {
  /** One sample line: {@code name{labels} value [# {exemplar labels} value [timestamp]]}. */
  record Sample(String name, Map<String, String> labels, double value, Exemplar exemplar) {}

  record Exemplar(Map<String, String> labels, double value) {}

  static OpenMetricsText parse(String text) {
    List<Sample> samples = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      Cursor c = new Cursor(line);
      String name = c.until(" {");
      Map<String, String> labels = c.peek() == '{' ? c.labels() : Map.of();
      c.expect(' ');
      double value = Double.parseDouble(c.until(" "));
      Exemplar exemplar = null;
      if (c.rest().startsWith(" # ")) {
        c.skip(3);
        Map<String, String> exemplarLabels = c.labels();
        c.expect(' ');
        exemplar = new Exemplar(exemplarLabels, Double.parseDouble(c.until(" ")));
      }
      samples.add(new Sample(name, labels, value, exemplar));
    }
    return new OpenMetricsText(samples);
  }

  /** The samples named {@code name}. */
  List<Sample> named(String name) {
    return samples.stream().filter(s -> s.name().equals(name)).toList();
  }

  private static final class Cursor {
    private final String line;
    private int at;

    Cursor(String line) {
      this.line = line;
    }

    char peek() {
      return at < line.length() ? line.charAt(at) : '\0';
    }

    String rest() {
      return line.substring(at);
    }

    void skip(int n) {
      at += n;
    }

    void expect(char ch) {
      if (peek() != ch) {
        throw new IllegalArgumentException("expected '" + ch + "' at " + at + " of: " + line);
      }
      at++;
    }

    String until(String stops) {
      int start = at;
      while (at < line.length() && stops.indexOf(line.charAt(at)) < 0) {
        at++;
      }
      return line.substring(start, at);
    }

    /** {@code {a="x",b="y\"z"}}. */
    Map<String, String> labels() {
      expect('{');
      Map<String, String> labels = new LinkedHashMap<>();
      while (peek() != '}') {
        String key = until("=");
        expect('=');
        expect('"');
        StringBuilder value = new StringBuilder();
        while (peek() != '"') {
          char ch = line.charAt(at++);
          if (ch == '\\') {
            char escaped = line.charAt(at++);
            value.append(escaped == 'n' ? '\n' : escaped);
          } else {
            value.append(ch);
          }
        }
        expect('"');
        labels.put(key, value.toString());
        if (peek() == ',') {
          at++;
        }
      }
      expect('}');
      return labels;
    }
  }
}
