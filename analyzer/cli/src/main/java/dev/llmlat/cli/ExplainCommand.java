package dev.llmlat.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.ClockCorrection;
import dev.llmlat.attribution.engines.EngineAdapters;
import dev.llmlat.report.Waterfall;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
    name = "explain",
    mixinStandardHelpOptions = true,
    description =
        "Where one request's TTFT went: a waterfall of the aligned layers, the components, the inter-token gaps and their causes.")
final class ExplainCommand implements Callable<Integer> {
  enum Format {
    text,
    json
  }

  @Mixin StoreOptions store;

  @Parameters(paramLabel = "TRACE_ID", description = "The request's W3C trace id (32 hex digits).")
  String traceId;

  @Option(
      names = "--format",
      defaultValue = "text",
      description = "text or json. Default: ${DEFAULT-VALUE}.")
  Format format;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    Attribution a;
    try (ClickHouseStore s = store.open()) {
      a = new Analyzer(s).explain(traceId);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (format == Format.json) {
      out.println(
          new ObjectMapper()
              .enable(SerializationFeature.INDENT_OUTPUT)
              .writeValueAsString(json(a)));
    } else {
      Waterfall.print(a, out);
    }
    out.flush();
    return 0;
  }

  private static void putKnown(ObjectNode n, String key, long value) {
    if (value >= 0) {
      n.put(key, value);
    }
  }

  static ObjectNode json(Attribution a) {
    ObjectMapper m = new ObjectMapper();
    ObjectNode root = m.createObjectNode();
    root.put("trace_id", a.traceId());
    root.put("ttft_ns", a.ttftNs());
    root.put("ttft_start_layer", a.startLayer());
    root.put("model", a.model());
    root.put("engine_adapter", a.engineAdapter());
    root.put("engine_instance", a.engineInstance());
    root.put("engine_cannot_show", EngineAdapters.cannotShow(a.engineAdapter()));
    ObjectNode components = root.putObject("components");
    for (Map.Entry<String, Long> c : a.components().entrySet()) {
      components.put(c.getKey(), c.getValue());
    }
    // disaggregated prefill/decode: each component's share per instance (summing to the component),
    // and what cannot be split
    root.put("disaggregated", a.disaggregated());
    ObjectNode byInstance = root.putObject("component_instances");
    for (Attribution.InstancePart p : a.instanceParts()) {
      ArrayNode list =
          byInstance.has(p.component())
              ? (ArrayNode) byInstance.get(p.component())
              : byInstance.putArray(p.component());
      ObjectNode n = list.addObject();
      n.put("instance", p.instance());
      n.put("role", p.role());
      n.put("ns", p.ns());
    }
    // tensor parallelism: the late ranks the request's steps waited for, summing exactly to
    // components.rank_wait
    ArrayNode lateRanks = root.putArray("rank_waits");
    for (Attribution.RankWait w : a.rankWaits()) {
      ObjectNode n = lateRanks.addObject();
      n.put("rank", w.rank());
      n.put("device", w.device());
      n.put("wait_ns", w.waitNs());
      n.put("steps", w.steps());
    }
    // the gateway's upstream connection, where the extension's hooks saw it (components.upstream_*
    // are its times in TTFT)
    dev.llmlat.attribution.UpstreamConnection u = a.upstream();
    ObjectNode upstream = root.putObject("upstream_connection");
    upstream.put("observed", u.observed());
    if (u.observed()) {
      upstream.put("client", u.client());
      upstream.put("pool", u.pool());
      putKnown(upstream, "pool_max", u.poolMax());
      putKnown(upstream, "pool_pending", u.pending());
      putKnown(upstream, "pool_leased", u.leased());
      upstream.put("connection", u.connection());
      upstream.put("pool_wait_ns", u.poolWaitNs());
      upstream.put("connect_ns", u.connectNs());
      upstream.put("tls_ns", u.tlsNs());
    } else {
      a.notes().stream()
          .filter(n -> n.startsWith("connection set-up unknown"))
          .findFirst()
          .ifPresent(n -> upstream.put("note", n));
    }
    ArrayNode cannotSplit = root.putArray("disaggregation_cannot_split");
    a.notes().stream()
        .filter(n -> n.startsWith("disaggregated") && n.contains("cannot"))
        .forEach(cannotSplit::add);
    // what the engine did while the request queued: parts summing exactly to components.queue
    root.set("queue_breakdown", dev.llmlat.report.QueueBreakdownText.json(a));
    root.put("queue_limit", dev.llmlat.report.QueueBreakdownText.limit(a));
    ArrayNode itl = root.putArray("itl");
    for (Attribution.Gap g : a.itl()) {
      ObjectNode n = itl.addObject();
      n.put("index", g.index());
      n.put("start_unix_nano", g.startNs());
      n.put("gap_ns", g.gapNs());
      // the part of the gap its token waited for the gateway to write to a slow-reading client; the
      // rest is the engine's
      n.put("backpressure_ns", g.backpressureNs());
      if (!g.cause().isEmpty()) {
        n.put("cause", g.cause());
      }
    }
    ArrayNode corrections = root.putArray("corrections");
    for (ClockCorrection c : a.corrections()) {
      ObjectNode n = corrections.addObject();
      n.put("host", c.host());
      n.put("relative_to", c.relativeTo());
      n.put("offset_ns", c.offsetAt(a.arrivalNs()));
      n.put("drift_ns_per_s", c.driftNsPerSecond());
      n.put("uncertainty_ns", c.uncertaintyNs());
      n.put("pairs", c.pairs());
      n.put("applied", c.applied());
      n.put("note", c.note());
    }
    ArrayNode path = root.putArray("critical_path");
    for (Attribution.Segment s : a.criticalPath()) {
      ObjectNode n = path.addObject();
      n.put("component", s.component());
      n.put("span", s.span());
      n.put("start_unix_nano", s.startNs());
      n.put("end_unix_nano", s.endNs());
      if (!s.instance().isEmpty()) {
        n.put("instance", s.instance());
      }
    }
    ArrayNode notes = root.putArray("notes");
    a.notes().forEach(notes::add);
    return root;
  }
}
