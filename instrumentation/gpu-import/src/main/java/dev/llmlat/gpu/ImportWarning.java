package dev.llmlat.gpu;

/**
 * Something an import kept although the export was not quite right, counted: what was wrong and
 * what the import did about it ({@code problem}), how often, and where it first happened ({@code
 * first}: the event, row or span, as a user would look it up). Values that cannot be kept without
 * changing their meaning are refused instead ({@link InvalidExportException}).
 */
public record ImportWarning(String problem, long count, String first) {
  /**
   * One line: {@code 3 × GPU activities with end before start: kept as zero-length (first: ...)}.
   */
  public String message() {
    return String.format("%,d × %s (first: %s)", count, problem, first);
  }

  @Override
  public String toString() {
    return message();
  }
}
