package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.runtime.home.LlmlatHome;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LlmlatCliTest {
  @TempDir Path dir;

  record Run(int exit, String out, String err) {}

  /** Runs the CLI in-process with captured streams (also used by {@link CliSecurityTest}). */
  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = Llmlat.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
    return new Run(exit, out.toString(), err.toString());
  }

  /**
   * Makes an llmlat store in {@code dir} (new or empty) the way a user does, for the commands that
   * only read one.
   */
  static Path store(Path dir) {
    Run r = run("migrate", "--data-dir", dir.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    return dir;
  }

  @Test
  void sqlPrintsAnAlignedTable() {
    store(dir);
    Run r =
        run(
            "sql",
            "--data-dir",
            dir.toString(),
            "SELECT number AS n, repeat('x', number) AS xs FROM numbers(1, 10) WHERE n IN (1, 10) ORDER BY n");
    assertThat(r.exit()).isZero();
    assertThat(r.out())
        .isEqualTo(
            """
         n  xs
        --  ----------
         1  x
        10  xxxxxxxxxx
        (2 rows)
        """);
  }

  @Test
  void sqlPrintsTsvAndJson() {
    String sql =
        "SELECT toUInt8(1) AS a, 'q\"t' AS b, toUInt64(18446744073709551615) AS big, true AS ok, NULL AS none";
    store(dir);
    Run tsv = run("sql", "--data-dir", dir.toString(), "--format", "tsv", sql);
    assertThat(tsv.out())
        .isEqualTo("a\tb\tbig\tok\tnone\n1\tq\"t\t18446744073709551615\ttrue\t\\N\n");
    Run json = run("sql", "--data-dir", dir.toString(), "--format", "json", sql);
    assertThat(json.out().replaceAll("\\s+", ""))
        .isEqualTo(
            "[{\"a\":1,\"b\":\"q\\\"t\",\"big\":\"18446744073709551615\",\"ok\":true,\"none\":null}]");
  }

  @Test
  void sqlOnTheEmbeddedDefaultSeesTheSchema() {
    store(dir);
    Run r =
        run(
            "sql",
            "--data-dir",
            dir.toString(),
            "--format",
            "tsv",
            "SELECT count() FROM otel_traces");
    assertThat(r.out()).isEqualTo("count()\n0\n");
  }

  @Test
  void demoPushesSpansOfAllLayersThroughKafkaAndPrintsWhatLanded() {
    System.setProperty(LlmlatHome.PROPERTY, dir.resolve("home").toString());
    Run r;
    try {
      r =
          run(
              "demo",
              "--synthetic",
              "--data-dir",
              dir.resolve("store").toString(),
              "--requests",
              "3");
    } finally {
      System.clearProperty(LlmlatHome.PROPERTY);
    }
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out())
        .contains("kafka: 127.0.0.1:")
        .contains("(started for this run)")
        .contains(
            "published 23 spans of 3 requests as 3 OTLP records (key = trace id) to otlp_spans")
        .contains("ingested them into otel_traces")
        .contains("POST /v1/chat/completions  Server")
        .contains("llm_request")
        .contains("-- GPU steps and the requests they served");
    Run layers =
        run(
            "sql",
            "--data-dir",
            dir.resolve("store").toString(),
            "--format",
            "tsv",
            "SELECT ResourceAttributes['llmlat.layer'] AS layer, count() FROM otel_traces GROUP BY layer ORDER BY layer");
    assertThat(layers.out()).isEqualTo("layer\tcount()\nengine\t12\ngateway\t6\ngpu\t5\n");
    // the broker started for the run is gone, and so is its scratch directory
    assertThat(dir.resolve("home").resolve("tmp")).isEmptyDirectory();
  }

  /**
   * The main job for real: engine, gateway under the real agent + extension, Kafka, ingester,
   * store, analyzer.
   */
  @Test
  void demoRunsEveryLayerAndEndsWithTheBreakdown() throws java.io.IOException {
    System.setProperty(LlmlatHome.PROPERTY, dir.resolve("home").toString());
    // a thread of the demo that dies prints a stack trace at the user; catch it here instead
    List<Throwable> uncaught = new java.util.concurrent.CopyOnWriteArrayList<>();
    Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler((thread, e) -> uncaught.add(e));
    Run r;
    try {
      r =
          run(
              "demo",
              "--data-dir",
              dir.resolve("store").toString(),
              "--requests",
              "6",
              "--rate",
              "6",
              "--time-scale",
              "0.1",
              "--gateway-pool",
              "1");
    } finally {
      System.clearProperty(LlmlatHome.PROPERTY);
      Thread.setDefaultUncaughtExceptionHandler(previous);
    }
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(uncaught).as("exceptions that escaped the demo's threads").isEmpty();
    assertThat(r.out())
        .contains("under the OpenTelemetry agent")
        .contains("client: llmlat load")
        .contains("analyzed: 6 requests attributed")
        .contains("Client vs server TTFT (6 requests")
        .contains("requests: 6")
        .contains("-- the slowest request: llmlat explain ");
    // every layer landed, for every request (a GPU step lives in its first request's trace and
    // names all it served)
    Run layers =
        run(
            "sql",
            "--data-dir",
            dir.resolve("store").toString(),
            "--format",
            "tsv",
            "SELECT ResourceAttributes['llmlat.layer'] AS layer, uniqExact(TraceId) AS requests FROM otel_traces"
                + " WHERE layer IN ('client', 'gateway', 'engine') GROUP BY layer ORDER BY layer");
    assertThat(layers.out()).isEqualTo("layer\trequests\nclient\t6\nengine\t6\ngateway\t6\n");
    Run gpu =
        run(
            "sql",
            "--data-dir",
            dir.resolve("store").toString(),
            "--format",
            "tsv",
            "SELECT uniqExact(t) AS requests FROM otel_traces ARRAY JOIN JSONExtract(SpanAttributes['llmlat.trace_ids'], 'Array(String)') AS t"
                + " WHERE ResourceAttributes['llmlat.layer'] = 'gpu'");
    assertThat(gpu.out()).isEqualTo("requests\n6\n");
    Run sums =
        run(
            "sql",
            "--data-dir",
            dir.resolve("store").toString(),
            "--format",
            "tsv",
            "SELECT count() AS n, countIf(ClientToGatewayNs + GatewayInNs + UpstreamPoolWaitNs + UpstreamConnectNs + UpstreamTlsNs"
                + " + NetworkInNs + EngineInNs + QueueNs + DecodeWaitNs + KvTransferNs + PrefillCpuNs + PrefillGpuNs + RankWaitNs"
                + " + BatchInterferenceNs + FirstSampleNs + NetworkOutNs + GatewayOutNs + GatewayToClientNs + UnattributedNs = TtftNs"
                + " AND TtftStartLayer = 'client' AND ServerTtftNs < TtftNs AND ClientToGatewayNs > 0 AND PrefillGpuNs > 0) AS exact"
                + " FROM llm_request_attribution FINAL");
    assertThat(sums.out()).isEqualTo("n\texact\n6\t6\n");
    // the gateway's one pooled connection: opened for the first request, reused by the other five,
    // each call seen
    Run connections =
        run(
            "sql",
            "--data-dir",
            dir.resolve("store").toString(),
            "--format",
            "tsv",
            "SELECT countIf(UpstreamClient = 'apache-httpclient-5') AS seen, countIf(UpstreamConnection = 'new') AS opened,"
                + " countIf(UpstreamConnection = 'reused') AS reused, max(UpstreamPoolMax) AS pool FROM llm_request_attribution FINAL");
    assertThat(connections.out()).isEqualTo("seen\topened\treused\tpool\n6\t1\t5\t1\n");
    // two tenants: the client's spans and the gateway's (the extension reads x-tenant-id) name
    // them, attribution groups them
    Run tenants =
        run(
            "sql",
            "--data-dir",
            dir.resolve("store").toString(),
            "--format",
            "tsv",
            "SELECT Tenant, count() AS n FROM llm_request_attribution FINAL GROUP BY Tenant ORDER BY Tenant");
    assertThat(tenants.out()).isEqualTo("Tenant\tn\nbatch\t2\nchat\t4\n");
    Run gatewayTenants =
        run(
            "sql",
            "--data-dir",
            dir.resolve("store").toString(),
            "--format",
            "tsv",
            "SELECT countIf(SpanAttributes['llmlat.tenant'] IN ('chat', 'batch')) AS named FROM otel_traces"
                + " WHERE ResourceAttributes['llmlat.layer'] = 'gateway' AND SpanKind = 'Server'");
    assertThat(gatewayTenants.out()).isEqualTo("named\n6\n");
    assertThat(r.out()).contains("-- llmlat report --by tenant").contains("by tenant (TTFT SLO");

    String slowest =
        run(
                "sql",
                "--data-dir",
                dir.resolve("store").toString(),
                "--format",
                "tsv",
                "SELECT TraceId FROM llm_request_attribution FINAL ORDER BY TtftNs DESC LIMIT 1")
            .out()
            .split("\n")[1];
    Run explain =
        run("explain", "--data-dir", dir.resolve("store").toString(), "--format", "json", slowest);
    assertThat(explain.exit()).as(explain.err()).isZero();
    JsonNode json = readJson(explain.out());
    assertThat(json.get("trace_id").asText()).isEqualTo(slowest);
    long sum = 0;
    for (JsonNode c : json.get("components")) {
      sum += c.asLong();
    }
    assertThat(sum).isEqualTo(json.get("ttft_ns").asLong()).isPositive();
    assertThat(json.get("components").fieldNames())
        .toIterable()
        .containsExactly(
            "client_to_gateway",
            "gateway_in",
            "upstream_pool_wait",
            "upstream_connect",
            "upstream_tls",
            "network_in",
            "engine_in",
            "queue",
            "decode_wait",
            "kv_transfer",
            "prefill_cpu",
            "prefill_gpu",
            "rank_wait",
            "batch_interference",
            "first_sample",
            "network_out",
            "gateway_out",
            "gateway_to_client",
            "unattributed");
    assertThat(json.get("itl").size()).isPositive();
    assertThat(json.get("critical_path").size()).isPositive();
    // the demo engine shows its steps: what it did while the request queued sums exactly to queue
    long queued = 0;
    for (JsonNode part : json.get("queue_breakdown")) {
      assertThat(part.get("cause").asText()).isNotBlank();
      queued += part.get("ns").asLong();
    }
    assertThat(queued).isEqualTo(json.get("components").get("queue").asLong());
    Run reportJson =
        run("report", "--data-dir", dir.resolve("store").toString(), "--format", "json");
    assertThat(reportJson.exit()).as(reportJson.err()).isZero();
    assertThat(readJson(reportJson.out()).has("queue_causes")).as(reportJson.out()).isTrue();
    assertThat(readJson(reportJson.out()).get("gateway_causes").get("requests").asLong())
        .as(reportJson.out())
        .isEqualTo(6);
    assertThat(json.get("upstream_connection").get("client").asText())
        .isEqualTo("apache-httpclient-5");
    assertThat(json.has("corrections")).isTrue();

    Path perfetto = dir.resolve("slowest.json");
    Run export =
        run(
            "export",
            "perfetto",
            "--data-dir",
            dir.resolve("store").toString(),
            slowest,
            "-o",
            perfetto.toString());
    assertThat(export.exit()).as(export.err()).isZero();
    JsonNode trace = readJson(java.nio.file.Files.readString(perfetto));
    java.util.Set<Integer> layersWithSpans = new java.util.TreeSet<>();
    double attributed = 0;
    for (JsonNode e : trace.get("traceEvents")) {
      if ("X".equals(e.get("ph").asText())) {
        if ("attribution".equals(e.get("cat").asText())) {
          attributed += e.get("dur").asDouble();
        } else {
          layersWithSpans.add(e.get("pid").asInt());
        }
      }
    }
    assertThat(layersWithSpans).contains(1, 2, 3); // gateway, engine, gpu
    assertThat(attributed * 1000)
        .isCloseTo(json.get("ttft_ns").asDouble(), org.assertj.core.data.Offset.offset(1000.0));
  }

  static JsonNode readJson(String text) {
    try {
      return new ObjectMapper().readTree(text);
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void badInputIsNamedWithExitCode2AndRefusalsWithExitCode1() {
    Run flag = run("sql", "--bogus", "SELECT 1");
    assertThat(flag.exit()).isEqualTo(2);
    assertThat(flag.err()).contains("Unknown option: '--bogus'");
    Run url = run("sql", "--clickhouse-url", "ftp://host", "SELECT 1");
    assertThat(url.exit()).isEqualTo(2);
    assertThat(url.err()).contains("ClickHouse URL 'ftp://host' must start with http://");
    Run empty = run("sql", "--data-dir=", "SELECT 1");
    assertThat(empty.exit()).isEqualTo(2);
    assertThat(empty.err()).contains("--data-dir").contains("empty");
    store(dir);
    Run format = run("sql", "--data-dir", dir.toString(), "--format", "xml", "SELECT 1");
    assertThat(format.exit()).isEqualTo(2);
    assertThat(format.err()).contains("--format").contains("xml");
    Run refused = run("sql", "--data-dir", dir.toString(), "SELECT * FROM nowhere");
    assertThat(refused.exit()).isEqualTo(1);
    assertThat(refused.err()).startsWith("llmlat: Code: 60.").contains("nowhere");
  }

  @Test
  void everyCommandHasHelp() {
    for (String command :
        new String[] {
          "demo",
          "sql",
          "migrate",
          "store",
          "services",
          "ingest",
          "analyze",
          "explain",
          "report",
          "import",
          "gpu-summary",
          "ebpf",
          "export"
        }) {
      Run r = run(command, "--help");
      assertThat(r.exit()).as(command).isZero();
      assertThat(r.out()).as(command).startsWith("Usage: llmlat " + command);
    }
    assertThat(run("--help").out()).contains("demo").contains("sql").contains("migrate");
  }

  /** Only the command being run is modelled; everything that needs them all still sees them all. */
  @Test
  void helpAndTyposSeeEveryCommandThoughOnlyTheOneRunIsBuilt() {
    String help = run("--help").out();
    for (Class<?> type : Llmlat.COMMANDS) {
      assertThat(help)
          .contains("  " + type.getAnnotation(picocli.CommandLine.Command.class).name() + " ");
    }
    Run typo = run("explian", "abc");
    assertThat(typo.exit()).isEqualTo(2);
    assertThat(typo.err()).contains("Unmatched argument").contains("explain");
    Run helpOf = run("help", "explain");
    assertThat(helpOf.exit()).isZero();
    assertThat(helpOf.out()).startsWith("Usage: llmlat explain");
    assertThat(run("--version").out()).startsWith("llmlat ");
  }
}
