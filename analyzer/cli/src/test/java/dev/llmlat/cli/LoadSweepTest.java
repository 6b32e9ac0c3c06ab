package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.engine.DemoEngine;
import dev.llmlat.engine.EngineConfig;
import dev.llmlat.engine.ExporterKind;
import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.load.LoadConfig;
import dev.llmlat.load.Slo;
import dev.llmlat.load.SyntheticPrompts;
import dev.llmlat.load.SyntheticPrompts.Length;
import dev.llmlat.load.Target;
import dev.llmlat.load.sweep.SweepConfig;
import dev.llmlat.otlpkafka.SpanPublisher;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.Await;
import dev.llmlat.testing.HeadlessChromium;
import dev.llmlat.testing.KafkaBrokerExtension;
import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code llmlat load --sweep-rate}: its flags, its files, Ctrl-C, and the TTFT components read from
 * the store the spans reach.
 */
class LoadSweepTest {
  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void badSweepFlagsExitTwoSayingWhatIsWrong() throws Exception {
    try (DemoEngine engine =
        DemoEngine.start(
            EngineConfig.builder().port(0).timeScale(0.05).exporter(ExporterKind.NONE).build())) {
      String url = engine.baseUri().toString();
      String[][] cases = {
        {
          "--sweep-rate and --sweep-concurrency exclude each other",
          "--sweep-rate",
          "1,2",
          "--sweep-concurrency",
          "1,2"
        },
        {
          "--sweep-rate gives each point's rate: drop --rate",
          "--sweep-rate",
          "1,2",
          "--rate",
          "3",
          "--duration",
          "2s"
        },
        {
          "--sweep-rate levels must rise: 2 comes after 4",
          "--sweep-rate",
          "4,2",
          "--duration",
          "2s"
        },
        {
          "--sweep-rate takes numbers separated by commas, e.g. 1,2,4,8; 'x' is none",
          "--sweep-rate",
          "1,x",
          "--duration",
          "2s"
        },
        {"a sweep runs each point for --duration", "--sweep-rate", "1,2"},
        {"--html is for a sweep", "--rate", "1", "--html", dir.resolve("p.html").toString()},
        {"--slo-target is for a sweep", "--rate", "1", "--slo-target", "95"},
        {
          "--slo-target must be above 0 and at most 100 (percent), not 150.0",
          "--sweep-rate",
          "1,2",
          "--duration",
          "2s",
          "--slo-target",
          "150"
        },
        {
          "--max-concurrency bounds rates",
          "--sweep-concurrency",
          "1,2",
          "--max-concurrency",
          "4",
          "--duration",
          "2s"
        },
        {
          "--sweep-concurrency levels are client counts from 1 to 100000, not 1.5",
          "--sweep-concurrency",
          "1.5,2",
          "--duration",
          "2s"
        },
        {
          "--poisson shapes rates; --sweep-concurrency runs closed loops",
          "--sweep-concurrency",
          "1,2",
          "--poisson",
          "--duration",
          "2s"
        },
        {
          "--html "
              + dir.resolve("no/p.html")
              + ": directory "
              + dir.resolve("no")
              + " does not exist",
          "--sweep-rate",
          "1,2",
          "--duration",
          "2s",
          "--html",
          dir.resolve("no/p.html").toString()
        },
      };
      for (String[] c : cases) {
        List<String> args =
            new ArrayList<>(List.of("load", url, "--no-spans", "--model", "tinylm"));
        args.addAll(List.of(c).subList(1, c.length));
        LlmlatCliTest.Run r = LlmlatCliTest.run(args.toArray(String[]::new));
        assertThat(r.exit()).as(String.join(" ", c)).isEqualTo(2);
        assertThat(r.err()).as(String.join(" ", c)).contains(c[0]);
        assertThat(r.out()).as(String.join(" ", c)).doesNotContain("point 1 of");
      }
    }
  }

  @Test
  void aSweepPrintsVllmsSummaryPerPointAndWritesItsFiles() throws Exception {
    Path result = dir.resolve("sweep.json");
    Path page = dir.resolve("sweep.html");
    LlmlatCliTest.Run r;
    try (DemoEngine engine =
        DemoEngine.start(
            EngineConfig.builder().port(0).timeScale(0.05).exporter(ExporterKind.NONE).build())) {
      r =
          LlmlatCliTest.run(
              "load",
              engine.baseUri().toString(),
              "--sweep-rate",
              "2,6",
              "--duration",
              "2s",
              "--input-len",
              "20",
              "--output-len",
              "6",
              "--slo-ttft",
              "500",
              "--no-spans",
              "--save-result",
              result.toString(),
              "--html",
              page.toString());
    }
    assertThat(r.exit()).as(r.out() + r.err()).isZero();
    assertThat(r.out())
        .contains("load sweep: --sweep-rate 2,6, 2s each, at most 256 in flight")
        .contains("TTFT components: none (--no-spans)")
        .contains("point 1 of 2: 2 req/s")
        .contains("point 2 of 2: 6 req/s")
        .contains("Load Sweep: 2 of 2 points, 2 s each")
        .contains("wrote " + result + " and " + page);
    assertThat(r.out().split("Serving Benchmark Result", -1))
        .hasSize(3); // vLLM's summary for each point
    JsonNode saved = JSON.readTree(result.toFile());
    assertThat(saved.get("results")).hasSize(2);
    assertThat(saved.get("results").get(1).get("request_rate").asDouble()).isEqualTo(6);
    assertThat(saved.get("llmlat_sweep").get("stopped").asBoolean()).isFalse();
    assertThat(Files.readString(page)).contains("<svg id=\"curve\"");
  }

  @Test
  void ctrlCKeepsThePointsThatFinished() throws Exception {
    Path result = dir.resolve("interrupted.json");
    Path log = dir.resolve("out.log");
    try (DemoEngine engine =
        DemoEngine.start(
            EngineConfig.builder().port(0).timeScale(0.05).exporter(ExporterKind.NONE).build())) {
      List<String> cmd = new ArrayList<>(DefaultSignals.prefix());
      cmd.addAll(
          List.of(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-Xmx256m",
              "-XX:+UseSerialGC",
              "-XX:TieredStopAtLevel=1",
              "-cp",
              System.getProperty("java.class.path"),
              Llmlat.class.getName(),
              "load",
              engine.baseUri().toString(),
              "--model",
              "tinylm",
              "--sweep-rate",
              "2,4,8",
              "--duration",
              "2s",
              "--input-len",
              "10",
              "--output-len",
              "4",
              "--no-spans",
              "--save-result",
              result.toString()));
      Process p =
          new ProcessBuilder(cmd)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .start();
      try {
        Await.until(
            () -> read(log).contains("point 2 of 3"),
            "the second point to start",
            60); // the first was written
        new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(read(log)).isTrue();
      } finally {
        p.destroyForcibly();
      }
      String out = read(log);
      assertThat(p.exitValue()).as(out).isEqualTo(130);
      assertThat(out)
          .contains("interrupted by SIGINT: the sweep covers the 1 points that finished")
          .contains("Load Sweep: 1 of 3 points");
    }
    JsonNode saved = JSON.readTree(result.toFile());
    assertThat(saved.get("results")).hasSize(1);
    assertThat(saved.get("results").get(0).get("request_rate").asDouble()).isEqualTo(2);
    assertThat(saved.get("llmlat_sweep").get("stopped").asBoolean()).isTrue();
  }

  /**
   * The whole path under a sweep, as `llmlat services up` runs it: the engine (a KV cache of 16
   * blocks: five prompts fill it) and the client send spans to Kafka, the ingester lands them in
   * the store, and after each point the sweep attributes its requests and reads their components.
   * Queue takes over TTFT as the rate rises, and the scheduler names the KV cache as the limit.
   */
  @Test
  void queueAndAFullKvCacheTakeOverTtftAsLoadRises() throws Exception {
    String topic = "sweep_spans";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, topic, 2);
    }
    Path result = dir.resolve("sweep.json");
    Path page = dir.resolve("sweep.html");
    StringWriter text = new StringWriter();
    int exit;
    SweepConfig sweep;
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("store"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      EngineConfig engineConfig =
          EngineConfig.builder()
              .port(0)
              .model("tinylm")
              .maxNumSeqs(8)
              .kvBlockSize(16)
              .kvBlocks(16)
              .timeScale(0.05)
              .exporter(ExporterKind.KAFKA)
              .kafkaBootstrap(broker.bootstrapServers())
              .topic(topic)
              .build();
      try (SpanIngester ingester =
              new SpanIngester(
                      IngesterConfig.builder(broker.bootstrapServers())
                          .topic(topic)
                          .groupId("g-" + topic)
                          .linger(Duration.ofMillis(100))
                          .reportInterval(Duration.ZERO)
                          .build(),
                      store)
                  .start();
          DemoEngine engine = DemoEngine.start(engineConfig);
          SpanPublisher publisher = new SpanPublisher(broker.bootstrapServers(), topic)) {
        LoadConfig base =
            LoadConfig.builder(Target.parse(engine.baseUri().toString(), null), "tinylm")
                .requests(0)
                .duration(Duration.ofSeconds(3))
                .slo(new Slo(Duration.ofMillis(300), null))
                .build();
        sweep =
            new SweepConfig(base, SweepConfig.Axis.RATE, List.of(1.0, 6.0, 24.0), false, 0, 0.9);
        String description = "Kafka " + broker.bootstrapServers() + " topic " + topic;
        LoadCommand.SpanRoute route =
            new LoadCommand.SpanRoute(
                () ->
                    new LoadCommand.SpanDestination(
                        publisher::publish, publisher::flush, () -> {}, description),
                () -> {},
                description,
                null);
        PrintWriter out = new PrintWriter(text, true);
        exit =
            new LoadSweep(
                    sweep,
                    route,
                    store,
                    Duration.ofSeconds(30),
                    OutputFile.check("--save-result", result),
                    OutputFile.check("--html", page),
                    out,
                    out)
                .run(new SyntheticPrompts(new Length(40, 0), new Length(24, 0), 3));
      }
    }
    assertThat(exit).as(text.toString()).isZero();
    JsonNode saved = JSON.readTree(result.toFile());
    JsonNode points = saved.get("llmlat_sweep").get("points");
    assertThat(points).hasSize(3);
    double[] queue = new double[3];
    for (int i = 0; i < 3; i++) {
      JsonNode c = points.get(i).get("ttft_components");
      assertThat(c).as("components at point %d: %s", i, text).isNotNull();
      // every request of the point attributed, tied to it by trace id
      Set<String> traces = new HashSet<>();
      saved.get("results").get(i).get("llmlat_trace_ids").forEach(t -> traces.add(t.asText()));
      assertThat(c.get("requests").asInt())
          .isEqualTo(traces.size())
          .isEqualTo(saved.get("results").get(i).get("completed").asInt());
      double sum = 0;
      for (String component : TtftComponent.ids()) {
        sum += c.get("shares").get(component).asDouble();
      }
      assertThat(sum)
          .isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-9)); // the components make up TTFT
      queue[i] = c.get("shares").get("queue").asDouble();
    }
    assertThat(queue[2])
        .as("queue's share at 24 req/s against 1 req/s")
        .isGreaterThan(queue[0] + 0.3);
    JsonNode busiest = points.get(2).get("ttft_components");
    String largest = null;
    double most = -1;
    for (String component : TtftComponent.ids()) {
      if (busiest.get("shares").get(component).asDouble() > most) {
        most = busiest.get("shares").get(component).asDouble();
        largest = component;
      }
    }
    assertThat(largest).isEqualTo("queue");
    assertThat(busiest.get("limits").get(0).get("kind").asText()).isEqualTo("KV cache N% full");
    assertThat(text.toString())
        .contains("at 24 req/s queue is ")
        .contains("binding limit: KV cache ");

    HeadlessChromium chromium = HeadlessChromium.require(dir.resolve("chromium-profile"));
    String dom = chromium.dom(page);
    assertThat(dom)
        .contains("<svg id=\"components\"")
        .contains("class=\"limit\"")
        .doesNotContain("components-none");
    Map<Integer, Integer> colours = chromium.colours(page, dir.resolve("sweep.png"), 900, 1800);
    assertThat(colours.getOrDefault(0xE45756, 0)).as("queue-coloured pixels").isGreaterThan(300);
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (java.io.IOException e) {
      return "";
    }
  }
}
