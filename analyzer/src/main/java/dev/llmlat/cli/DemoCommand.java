package dev.llmlat.cli;

import dev.llmlat.demo.DemoTraces;
import dev.llmlat.spans.OtelTracesRowEncoder;
import dev.llmlat.store.ClickHouseStore;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "The main job on embedded defaults: creates the schema in the store, writes a small set of",
      "multi-layer request traces (gateway, engine, GPU) and prints them back with SQL."
    })
final class DemoCommand implements Callable<Integer> {
  @Mixin StoreOptions store;

  @Option(names = "--requests", defaultValue = "4", description = "Requests to generate. Default: ${DEFAULT-VALUE}.")
  int requests;

  @Option(names = "--seed", defaultValue = "42", description = "Random seed of the generated traces. Default: ${DEFAULT-VALUE}.")
  long seed;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    if (requests < 1 || requests > 10_000) {
      throw new IllegalArgumentException("--requests must be between 1 and 10000, got " + requests);
    }
    PrintWriter out = spec.commandLine().getOut();
    try (ClickHouseStore s = store.open()) {
      out.println("store: " + s.description() + " (ClickHouse " + s.query("SELECT version()").single() + ")");
      List<DemoTraces.Request> generated = new ArrayList<>();
      // Distinct trace ids on every run; the seed fixes the shape of the requests.
      ExportTraceServiceRequest batch =
          new DemoTraces(seed ^ System.nanoTime(), System.currentTimeMillis() * 1_000_000L).generate(requests, generated);
      OtelTracesRowEncoder encoder = new OtelTracesRowEncoder().add(batch);
      int rows = encoder.rows();
      encoder.insertInto(s, null);
      out.printf("wrote %d spans of %d requests into otel_traces%n%n", rows, requests);
      String ids = DemoTraces.sqlList(generated);
      out.println("-- spans per request and layer");
      ResultPrinter.print(s.query(
          "SELECT TraceId, ResourceAttributes['llmlat.layer'] AS layer, count() AS spans,"
              + " round(sum(Duration) / 1e6, 3) AS total_ms"
              + " FROM otel_traces WHERE TraceId IN " + ids
              + " GROUP BY TraceId, layer ORDER BY TraceId, min(Timestamp)"), ResultPrinter.Format.table, out);
      out.println();
      out.println("-- the first request, span by span");
      ResultPrinter.print(s.query(
          "SELECT formatDateTime(Timestamp, '%H:%i:%S.%f') AS start, ServiceName, ResourceAttributes['llmlat.layer'] AS layer,"
              + " SpanName, SpanKind, round(Duration / 1e6, 3) AS ms"
              + " FROM otel_traces WHERE TraceId = '" + generated.get(0).traceIdHex() + "' ORDER BY Timestamp, SpanName"),
          ResultPrinter.Format.table, out);
      out.println();
      out.println("-- GPU steps and the requests they served (links)");
      ResultPrinter.print(s.query(
          "SELECT SpanId AS step, SpanAttributes['llmlat.step.batch_size'] AS batch, length(Links.TraceId) AS requests,"
              + " round(Duration / 1e6, 3) AS ms FROM otel_traces"
              + " WHERE ResourceAttributes['llmlat.layer'] = 'gpu' AND hasAny(Links.TraceId, [" + ids.substring(1, ids.length() - 1) + "])"
              + " ORDER BY Timestamp"), ResultPrinter.Format.table, out);
    }
    return 0;
  }
}
