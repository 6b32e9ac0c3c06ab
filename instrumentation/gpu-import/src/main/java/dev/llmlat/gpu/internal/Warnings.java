package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.ImportWarning;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Counts what an import kept with a warning, per problem, with where each problem first happened.
 */
public final class Warnings {
  private static final class Entry {
    long count;
    String first;
  }

  private final Map<String, Entry> entries = new LinkedHashMap<>();

  /**
   * Counts one occurrence of {@code problem}; true on the first, when the caller should name it
   * with {@link #first} (so the description is built once, not per occurrence).
   */
  public boolean count(String problem) {
    Entry e = entries.computeIfAbsent(problem, k -> new Entry());
    return e.count++ == 0;
  }

  /** Names where {@code problem} first happened. */
  public void first(String problem, String where) {
    Entry e = entries.get(problem);
    if (e != null && e.first == null) {
      e.first = where;
    }
  }

  /**
   * Adds {@code count} occurrences at once; {@code first} names the first unless one is named
   * already.
   */
  public void add(String problem, long count, String first) {
    if (count <= 0) {
      return;
    }
    Entry e = entries.computeIfAbsent(problem, k -> new Entry());
    e.count += count;
    if (e.first == null) {
      e.first = first;
    }
  }

  public void addAll(Warnings other) {
    if (other != null) {
      other.entries.forEach((problem, e) -> add(problem, e.count, e.first));
    }
  }

  public boolean isEmpty() {
    return entries.isEmpty();
  }

  public List<ImportWarning> list() {
    List<ImportWarning> out = new ArrayList<>(entries.size());
    entries.forEach(
        (problem, e) ->
            out.add(new ImportWarning(problem, e.count, e.first == null ? "?" : e.first)));
    return out;
  }
}
