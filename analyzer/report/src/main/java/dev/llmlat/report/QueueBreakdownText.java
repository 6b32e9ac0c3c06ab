package dev.llmlat.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.QueueBreakdown;
import dev.llmlat.semconv.TtftComponent;
import java.io.PrintWriter;

/** One request's queue breakdown for {@code explain}: text under the components, and JSON. */
public final class QueueBreakdownText {
  private static final ObjectMapper JSON = new ObjectMapper();

  private QueueBreakdownText() {}

  static void print(Attribution a, PrintWriter out) {
    QueueBreakdown q = a.queueBreakdown();
    if (q.parts().isEmpty()) {
      return;
    }
    long queue = a.component(TtftComponent.QUEUE);
    out.printf("%nqueue %.3f ms, while the engine ran:%n", queue / 1e6);
    for (QueueBreakdown.Part p : q.parts()) {
      out.printf(
          "  %10.3f ms %5.1f%%  %s%n",
          p.ns() / 1e6, queue == 0 ? 0 : 100.0 * p.ns() / queue, p.cause());
    }
    if (!q.limit().isEmpty()) {
      out.println("  binding limit: " + q.limit());
    }
  }

  /**
   * {@code explain --format json}'s {@code queue_breakdown}: [{kind, cause, ns, trace_id | batch},
   * ...].
   */
  public static ArrayNode json(Attribution a) {
    ArrayNode out = JSON.createArrayNode();
    for (QueueBreakdown.Part p : a.queueBreakdown().parts()) {
      ObjectNode n = out.addObject();
      n.put("kind", p.kind());
      n.put("cause", p.cause());
      n.put("ns", p.ns());
      if (!p.traceId().isEmpty()) {
        n.put("trace_id", p.traceId());
        if (p.tokens() > 0) {
          n.put("tokens", p.tokens());
        }
      }
      if (p.batch() > 0) {
        n.put("batch", p.batch());
      }
    }
    return out;
  }

  /** The limit that kept the request waiting, or "" ({@code queue_limit} in explain's JSON). */
  public static String limit(Attribution a) {
    return a.queueBreakdown().limit();
  }
}
