package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.engine.DemoEngine;
import dev.llmlat.engine.EngineConfig;
import dev.llmlat.engine.ExporterKind;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.testing.Await;
import dev.llmlat.testing.KafkaBrokerExtension;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code llmlat load} as users run it, against the real demo engine: flags, the store, Kafka,
 * Ctrl-C.
 */
class LoadCommandTest {
  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private DemoEngine engine;

  @BeforeEach
  void startEngine() throws Exception {
    engine =
        DemoEngine.start(
            EngineConfig.builder()
                .port(0)
                .model("tinylm")
                .timeScale(0.05)
                .exporter(ExporterKind.NONE)
                .build());
  }

  @AfterEach
  void stopEngine() {
    engine.close();
  }

  private LlmlatCliTest.Run load(String... args) {
    List<String> all = new ArrayList<>(List.of("load", engine.baseUri().toString()));
    all.addAll(List.of(args));
    return LlmlatCliTest.run(all.toArray(String[]::new));
  }

  @Test
  void badFlagsAndMalformedDatasetsExitTwoSayingWhatIsWrong() throws Exception {
    Path dataset =
        Files.writeString(
            dir.resolve("prompts.jsonl"),
            "{\"prompt\": \"hi\", \"output_tokens\": 4}\n{\"prompt\": 5}\n");
    String[][] cases = {
      {
        "say how requests arrive: --rate R [--poisson], or --concurrency N",
        "--no-spans",
        "--model",
        "m"
      },
      {
        "--rate (open loop) and --concurrency (closed loop) exclude each other",
        "--rate",
        "2",
        "--concurrency",
        "3",
        "--no-spans"
      },
      {"--rate must be above 0", "--rate", "0", "--no-spans", "--model", "m"},
      {"--requests must be at least 1, not 0", "--rate", "1", "--requests", "0", "--no-spans"},
      {"--poisson shapes a --rate", "--concurrency", "2", "--poisson", "--no-spans"},
      {
        dataset + ":2: \"prompt\" must be a non-empty string",
        "--rate",
        "1",
        "--dataset",
        dataset.toString(),
        "--no-spans"
      },
      {
        "--dataset " + dataset + " brings its own",
        "--rate",
        "1",
        "--dataset",
        dataset.toString(),
        "--output-len",
        "9",
        "--no-spans"
      },
      {"not a duration: 'soon'", "--rate", "1", "--timeout", "soon", "--no-spans", "--model", "m"},
      {
        "--save-result "
            + dir.resolve("missing/result.json")
            + ": directory "
            + dir.resolve("missing")
            + " does not exist",
        "--rate",
        "1",
        "--no-spans",
        "--model",
        "m",
        "--save-result",
        dir.resolve("missing/result.json").toString()
      },
      {
        "--endpoint is chat or completions, not 'grpc'",
        "--rate",
        "1",
        "--endpoint",
        "grpc",
        "--no-spans"
      },
      {
        "--no-spans records no spans: drop --to store",
        "--rate",
        "1",
        "--no-spans",
        "--to",
        "store",
        "--model",
        "m"
      },
      {
        "--slo-ttft must be above 0 ms",
        "--rate",
        "1",
        "--no-spans",
        "--model",
        "m",
        "--slo-ttft",
        "-5"
      },
      {
        "--input-len / --input-len-stddev: a length is between 1 and 1,000,000 tokens, not 0",
        "--rate",
        "1",
        "--input-len",
        "0",
        "--no-spans"
      },
      {
        "--max-line must be between 1 KiB and 1 GiB, not 10 bytes",
        "--rate",
        "1",
        "--no-spans",
        "--model",
        "m",
        "--max-line",
        "10"
      },
      {
        "--max-line takes a size such as 16MiB",
        "--rate",
        "1",
        "--no-spans",
        "--model",
        "m",
        "--max-line",
        "lots"
      },
    };
    for (String[] c : cases) {
      LlmlatCliTest.Run r = load(java.util.Arrays.copyOfRange(c, 1, c.length));
      assertThat(r.exit()).as(String.join(" ", c)).isEqualTo(2);
      assertThat(r.err()).as(String.join(" ", c)).contains(c[0]);
    }
    LlmlatCliTest.Run url =
        LlmlatCliTest.run("load", "localhost:8000", "--rate", "1", "--no-spans");
    assertThat(url.exit()).isEqualTo(2);
    assertThat(url.err()).contains("URL 'localhost:8000' must start with http:// or https://");
    // the JDK's client takes this URL and fails every request while sending it: refused before any
    LlmlatCliTest.Run port =
        LlmlatCliTest.run(
            "load",
            "http://127.0.0.1:99999",
            "--rate",
            "50",
            "--requests",
            "2",
            "--no-spans",
            "--model",
            "m");
    assertThat(port.exit()).isEqualTo(2);
    assertThat(port.err())
        .isEqualTo(
            "llmlat load: URL 'http://127.0.0.1:99999' has port 99999, outside 1-65535"
                + System.lineSeparator());
    assertThat(port.out()).doesNotContain("load: ");
  }

  @Test
  void aSaveResultPathWhereNoFileCanBeCreatedIsRefusedBeforeTheRun() {
    // root passes every permission check and /proc's bits say rwx: only creating a file there tells
    org.junit.jupiter.api.Assumptions.assumeTrue(
        Files.isDirectory(Path.of("/proc/self")), "a Linux /proc");
    LlmlatCliTest.Run r =
        load(
            "--rate",
            "50",
            "--requests",
            "2",
            "--no-spans",
            "--model",
            "tinylm",
            "--save-result",
            "/proc/result.json");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--save-result /proc/result.json: cannot create a file in /proc");
    assertThat(r.out()).doesNotContain("load: ");
  }

  @Test
  void aResultThatCannotBeWrittenAfterTheRunStillLeavesTheSummaryAndExitsOne() throws Exception {
    Path out = Files.createDirectory(dir.resolve("out"));
    Path result = out.resolve("result.json");
    // the directory goes away once the engine runs a step (it has a request: the check passed)
    // while
    // the run still has requests to send, 2 s apart: the write at the end cannot
    AtomicReference<Throwable> removing = new AtomicReference<>();
    Thread remover =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    Await.until(
                        () -> engineStat("steps") >= 1,
                        "the engine to run a step of the load's first request",
                        120);
                    Files.delete(out);
                  } catch (Throwable e) {
                    removing.set(e);
                  }
                });
    LlmlatCliTest.Run r =
        load(
            "--rate",
            "0.5",
            "--requests",
            "3",
            "--input-len",
            "5",
            "--output-len",
            "3",
            "--no-spans",
            "--model",
            "tinylm",
            "--save-result",
            result.toString());
    remover.join();
    assertThat(removing.get()).as("removing the directory mid-run").isNull();
    assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
    assertThat(r.out())
        .contains("Serving Benchmark Result")
        .contains("Successful requests:                     3")
        .doesNotContain("wrote ");
    assertThat(r.err())
        .contains(
            "llmlat load: the result was not saved (nothing was written): --save-result "
                + result
                + ": directory "
                + out
                + " does not exist");
    assertThat(out).doesNotExist();
  }

  @Test
  void aRequestThatFailsInsideLlmlatIsCountedAsInternalAndExitsOne() throws Exception {
    // a Content-Length that is no number makes the JDK's client throw IllegalArgumentException, not
    // IOException
    try (java.net.ServerSocket server =
        new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      Thread.ofPlatform()
          .daemon()
          .start(
              () -> {
                while (true) {
                  try (java.net.Socket s = server.accept()) {
                    java.io.InputStream in = s.getInputStream();
                    StringBuilder head = new StringBuilder();
                    int b;
                    while (!head.toString().endsWith("\r\n\r\n") && (b = in.read()) >= 0) {
                      head.append((char) b);
                    }
                    java.util.regex.Matcher length =
                        java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)")
                            .matcher(head);
                    in.readNBytes(
                        length.find()
                            ? Integer.parseInt(length.group(1))
                            : 0); // unread input would reset the connection
                    s.getOutputStream()
                        .write(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: abc\r\n\r\n"
                                .getBytes());
                  } catch (java.io.IOException e) {
                    return; // the server closed
                  }
                }
              });
      java.io.PrintStream stderr = System.err;
      java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
      System.setErr(new java.io.PrintStream(printed, true));
      LlmlatCliTest.Run r;
      try {
        r =
            LlmlatCliTest.run(
                "load",
                "http://127.0.0.1:" + server.getLocalPort(),
                "--rate",
                "50",
                "--requests",
                "2",
                "--no-spans",
                "--model",
                "m");
      } finally {
        System.setErr(stderr);
      }
      assertThat(printed.toString()).as("no stack trace").doesNotContain("Exception");
      assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
      assertThat(r.out())
          .contains("Failed requests:                         2")
          .contains("internal:                                2");
      assertThat(r.err())
          .contains(
              "llmlat load: 2 requests failed inside llmlat, not at the server (first: internal: IllegalArgumentException");
    }
  }

  @Test
  void spansGoToTheStoreAndTheResultFileHasVllmsKeys() throws Exception {
    Path data = dir.resolve("data");
    Path result = dir.resolve("result.json");
    // no --model: the first the server lists, as vLLM's benchmark does
    LlmlatCliTest.Run r =
        load(
            "--rate",
            "40",
            "--requests",
            "8",
            "--input-len",
            "20",
            "--output-len",
            "6",
            "--output-len-stddev",
            "2",
            "--to",
            "store",
            "--data-dir",
            data.toString(),
            "--save-result",
            result.toString(),
            "--slo-ttft",
            "50");
    assertThat(r.exit()).as(r.out() + r.err()).isZero();
    assertThat(r.out())
        .contains("(model tinylm)")
        .contains("Successful requests:                     8")
        .contains("Spans: 8 client spans to embedded ClickHouse")
        .contains("wrote " + result);

    JsonNode saved = JSON.readTree(result.toFile());
    assertThat(saved.get("completed").asInt()).isEqualTo(8);
    assertThat(saved.get("model_id").asText()).isEqualTo("tinylm");
    assertThat(saved.get("request_rate").asDouble()).isEqualTo(40);
    long good = 0;
    for (JsonNode ttft : saved.get("ttfts")) {
      good += ttft.asDouble() * 1000 <= 50 ? 1 : 0;
    }
    assertThat(saved.get("llmlat_goodput").get("good").asLong()).isEqualTo(good);
    assertThat(saved.get("request_goodput").asDouble())
        .isEqualTo(good / saved.get("duration").asDouble());
    Set<String> traces = new HashSet<>();
    saved.get("llmlat_trace_ids").forEach(t -> traces.add(t.asText()));

    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(data, EngineLibrary.locate())) {
      List<List<String>> rows =
          store
              .query(
                  "SELECT TraceId, SpanKind, ResourceAttributes['llmlat.layer'], ParentSpanId,"
                      + " SpanAttributes['llmlat.client.chunks'], length(JSONExtractArrayRaw(SpanAttributes['llmlat.client.chunk_deltas_ns'])),"
                      + " has(Events.Name, 'llmlat.client.first_chunk') FROM otel_traces")
              .rows();
      assertThat(rows).hasSize(8);
      assertThat(rows).extracting(row -> row.get(0)).containsExactlyInAnyOrderElementsOf(traces);
      assertThat(rows)
          .allSatisfy(
              row -> {
                assertThat(row.subList(1, 4)).containsExactly("Client", "client", "");
                assertThat(Integer.parseInt(row.get(5)))
                    .isEqualTo(Integer.parseInt(row.get(4)) - 1);
                assertThat(row.get(6)).isEqualTo("1");
              });
    }
  }

  @Test
  void spansGoToTheSpanTopicKeyedByTraceIdAndAMissingTopicIsSaidFirst() throws Exception {
    String topic = "load_cli_spans";
    LlmlatCliTest.Run missing =
        load(
            "--rate",
            "20",
            "--requests",
            "3",
            "--kafka",
            broker.bootstrapServers(),
            "--topic",
            topic);
    assertThat(missing.exit()).isEqualTo(1);
    assertThat(missing.err())
        .contains("has no topic " + topic + " (`llmlat services up` creates it");
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, topic, 2);
    }
    LlmlatCliTest.Run r =
        load(
            "--rate",
            "20",
            "--requests",
            "5",
            "--input-len",
            "10",
            "--output-len",
            "4",
            "--kafka",
            broker.bootstrapServers(),
            "--topic",
            topic);
    assertThat(r.exit()).as(r.out() + r.err()).isZero();
    List<String[]> read = new ArrayList<>(); // {key, trace id of the record's span}
    try (KafkaConsumer<String, byte[]> consumer =
        new KafkaConsumer<>(
            Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
            new StringDeserializer(),
            new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Await.until(
          () -> {
            for (ConsumerRecord<String, byte[]> rec : consumer.poll(Duration.ofMillis(200))) {
              try {
                ExportTraceServiceRequest req = ExportTraceServiceRequest.parseFrom(rec.value());
                req.getResourceSpansList()
                    .forEach(
                        rs ->
                            rs.getScopeSpansList()
                                .forEach(
                                    ss ->
                                        ss.getSpansList()
                                            .forEach(
                                                s ->
                                                    read.add(
                                                        new String[] {
                                                          rec.key(),
                                                          HexFormat.of()
                                                              .formatHex(
                                                                  s.getTraceId().toByteArray())
                                                        }))));
              } catch (Exception e) {
                throw new AssertionError(e);
              }
            }
            return read.size() >= 5;
          },
          "5 client spans on " + topic);
    }
    assertThat(read).hasSize(5).allSatisfy(k -> assertThat(k[0]).isEqualTo(k[1]));
  }

  @Test
  void ctrlCStopsSendingAndPrintsTheSummaryOfWhatFinished() throws Exception {
    Path result = dir.resolve("interrupted.json");
    Path log = dir.resolve("out.log");
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
            "--rate",
            "10",
            "--duration",
            "5m",
            "--input-len",
            "10",
            "--output-len",
            "30",
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
      Await.until(() -> read(log).contains("load: "), "the load to start", 120);
      // some requests finished (at 10 a second for 5 minutes, others follow)
      Await.until(
          () -> engineStat("finished") >= 2,
          "the engine to finish two of the load's requests",
          120);
      new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        // what it was doing, for whoever reads the failure
        Path dump = dir.resolve("threads.txt");
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(p.pid()),
                "Thread.print")
            .redirectErrorStream(true)
            .redirectOutput(dump.toFile())
            .start()
            .waitFor(30, TimeUnit.SECONDS);
        throw new AssertionError(
            "still running 60 s after SIGINT; its output:\n"
                + read(log)
                + "\nits threads:\n"
                + read(dump));
      }
    } finally {
      p.destroyForcibly();
    }
    String out = read(log);
    assertThat(p.exitValue()).as(out).isEqualTo(130);
    assertThat(out)
        .contains("llmlat load: interrupted by SIGINT; stopping")
        .contains("interrupted by SIGINT: the summary covers the")
        .contains("Serving Benchmark Result")
        .contains("wrote " + result);
    JsonNode saved = JSON.readTree(result.toFile());
    assertThat(saved.get("llmlat_stopped").asBoolean()).isTrue();
    assertThat(saved.get("completed").asInt()).isPositive();
    assertThat(saved.get("ttfts")).hasSize(saved.get("llmlat_trace_ids").size());
  }

  /** A count of the engine's stats line ({@code steps}, {@code finished}, ...). */
  private long engineStat(String name) {
    String line = engine.statsLine();
    Matcher m = Pattern.compile("\\b" + name + "=(\\d+)").matcher(line);
    assertThat(m.find()).as("%s in %s", name, line).isTrue();
    return Long.parseLong(m.group(1));
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (java.io.IOException e) {
      return "";
    }
  }
}
