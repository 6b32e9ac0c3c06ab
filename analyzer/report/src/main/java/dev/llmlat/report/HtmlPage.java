package dev.llmlat.report;

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

  /** A component's colour, the same in every chart. */
  public static String color(String component) {
    return switch (component) {
      case "client_to_gateway" -> "#79706E";
      case "gateway_in" -> "#9D755D";
      case "upstream_pool_wait" -> "#8C564B";
      case "upstream_connect" -> "#C49C94";
      case "upstream_tls" -> "#E7BA52";
      case "network_in" -> "#BAB0AC";
      case "engine_in" -> "#D6A5C9";
      case "queue" -> "#E45756";
      case "decode_wait" -> "#FF7F0E";
      case "kv_transfer" -> "#FF9DA6";
      case "rank_wait" -> "#17BECF";
      case "prefill_cpu" -> "#F58518";
      case "prefill_gpu" -> "#54A24B";
      case "batch_interference" -> "#B279A2";
      case "first_sample" -> "#EECA3B";
      case "network_out" -> "#72B7B2";
      case "gateway_out" -> "#4C78A8";
      case "gateway_to_client" -> "#9ECAE9";
      default -> "#D3D3D3";
    };
  }
}
