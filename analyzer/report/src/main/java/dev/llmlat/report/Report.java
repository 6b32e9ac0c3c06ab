package dev.llmlat.report;

import java.io.PrintWriter;

/**
 * A report as people read it: text for the terminal, JSON for tools, one self-contained HTML page.
 */
public interface Report {
  void printText(PrintWriter out);

  String json();

  String html();
}
