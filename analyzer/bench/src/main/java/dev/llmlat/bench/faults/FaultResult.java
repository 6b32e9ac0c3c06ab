package dev.llmlat.bench.faults;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one fault scenario found.
 *
 * @param scenario its name ({@code --only})
 * @param spans spans whose delivery was claimed (acknowledged to their sender)
 * @param foundOnce of those, stored exactly once
 * @param lost claimed but not stored
 * @param duplicated extra copies stored
 * @param dlq records sent to the dead-letter topic
 * @param figures further measurements, in print order
 * @param problems anything else that went wrong (a dead ingester, a vague error, a half-published
 *     import)
 */
public record FaultResult(
    String scenario,
    long spans,
    long foundOnce,
    long lost,
    long duplicated,
    long dlq,
    Map<String, String> figures,
    List<String> problems) {

  public FaultResult {
    figures = new LinkedHashMap<>(figures);
    problems = List.copyOf(problems);
  }

  public boolean passed() {
    return lost == 0 && duplicated == 0 && problems.isEmpty();
  }

  /** One line: the counts, then the figures, then the problems. */
  public String line() {
    StringBuilder b =
        new StringBuilder(
            String.format(
                "%-16s spans=%d found_once=%d lost=%d duplicated=%d dlq=%d",
                scenario, spans, foundOnce, lost, duplicated, dlq));
    figures.forEach((k, v) -> b.append(' ').append(k).append('=').append(v));
    if (!problems.isEmpty()) {
      b.append("  PROBLEMS: ").append(String.join("; ", problems));
    }
    return b.toString();
  }
}
