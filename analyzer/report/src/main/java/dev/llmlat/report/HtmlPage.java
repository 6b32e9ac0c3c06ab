package dev.llmlat.report;

import dev.llmlat.semconv.TtftComponent;

/**
 * What llmlat's HTML pages share: one self-contained look (inline CSS, no scripts or external
 * assets, so a page can be mailed or attached to an incident) and one colour per component.
 */
public final class HtmlPage {
  private HtmlPage() {}

  /** The document up to and including {@code <body>}, with the shared style. */
  public static String head(String title) {
    return "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
        + escape(title)
        + "</title><style>"
        + "body{font:14px system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse}"
        + "td,th{padding:3px 10px;text-align:right;border-bottom:1px solid #ddd}td:first-child,th:first-child{text-align:left}"
        + ".legend span{display:inline-block;margin-right:12px}.sw{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}"
        + "</style></head><body>";
  }

  /** Text as HTML content or attribute value. */
  public static String escape(String text) {
    return text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;");
  }

  /** A component's colour, the same in every chart; grey for anything else. */
  public static String color(String component) {
    return TtftComponent.byId(component).map(TtftComponent::colour).orElse("#D3D3D3");
  }
}
