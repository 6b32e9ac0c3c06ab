package dev.llmlat.load.sweep;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.load.ResultFile;

/**
 * A sweep's result file: {@code results}, one vLLM benchmark result per finished point exactly as
 * {@link ResultFile} writes a single run's (with the point's place under {@code
 * llmlat_sweep_point}), and {@code llmlat_sweep}, the summary. Written whole after every point, so
 * a sweep stopped part way leaves a file of the points that finished.
 */
public final class SweepResultFile {
  private static final ObjectMapper JSON = new ObjectMapper();

  private SweepResultFile() {}

  /**
   * The file's content; {@code extra} is called with each point's result to add keys (the spans
   * shipped).
   */
  public static ObjectNode of(
      SweepSummary summary, java.util.function.BiConsumer<SweepPoint, ObjectNode> extra) {
    ObjectNode o = JSON.createObjectNode();
    o.put("llmlat_vllm_reference", ResultFile.VLLM_REFERENCE);
    o.set("llmlat_sweep", summary.json());
    ArrayNode results = o.putArray("results");
    for (SweepPoint p : summary.points()) {
      ObjectNode r = ResultFile.of(p.result(), p.metrics());
      r.putObject("llmlat_sweep_point")
          .put("index", p.index())
          .put("level", p.level())
          .put("label", summary.config().label(p.level()));
      extra.accept(p, r);
      results.add(r);
    }
    return o;
  }

  public static ObjectNode of(SweepSummary summary) {
    return of(summary, (p, r) -> {});
  }
}
