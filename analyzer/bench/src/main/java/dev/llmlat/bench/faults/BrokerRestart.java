package dev.llmlat.bench.faults;

import com.sun.net.httpserver.HttpServer;
import dev.llmlat.bench.AgentBenchmark;
import dev.llmlat.ingest.spans.OtelTracesRowEncoder;
import dev.llmlat.ingest.spans.OtlpRecordDecoder;
import dev.llmlat.semconv.LlmlatTopics;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The broker stopped (SIGTERM) and restarted on the same ports while (a) a gateway under the real
 * agent with llmlat's extension serves requests and (b) {@code llmlat import otlp-json} runs one
 * import after another. The gateway's latency before / during / after the outage and its exporter's
 * sent and dropped counters are reported; every import either commits all its spans or fails with a
 * message and leaves none (Kafka transactions), and nothing acknowledged is missing.
 */
final class BrokerRestart {
  static final String NAME = "broker-restart";
  private static final Pattern SENT = Pattern.compile("(\\d+) spans sent");
  private static final Pattern DROPPED = Pattern.compile("(\\d+) spans dropped");
  private static final int IMPORT_TRACES = 20;
  private static final int SPANS_PER_TRACE = 5;

  private final Duration outage;
  private final Duration phase;
  private final long seed;

  BrokerRestart(Duration outage, Duration phase, long seed) {
    this.outage = outage;
    this.phase = phase;
    this.seed = seed;
  }

  /** One request's start (ns, this JVM's clock) and latency. */
  private record Sample(long startNanos, long latencyNanos) {}

  /** One import run: its trace ids, exit code and message. */
  private record Import(List<String> traceIds, int exit, String message) {}

  FaultResult run(FaultRig rig, PrintWriter log) throws IOException, InterruptedException {
    // No Nagle on the fake engine's small SSE writes (see AgentBenchmark)
    System.setProperty("sun.net.httpserver.nodelay", "true");
    HttpServer upstream = AgentBenchmark.fakeEngine();
    Path gatewayLog = rig.dir.resolve("gateway.log");
    Map.Entry<Process, Integer> gateway =
        AgentBenchmark.startGateway(
            AgentBenchmark.extensionFlags(rig.bootstrap(), "-Dotel.exporter.kafka.log.interval=1s"),
            "http://127.0.0.1:" + upstream.getAddress().getPort(),
            gatewayLog);
    AtomicBoolean stop = new AtomicBoolean();
    List<Sample> samples = new CopyOnWriteArrayList<>();
    AtomicReference<Throwable> loadFailure = new AtomicReference<>();
    List<Import> imports = new CopyOnWriteArrayList<>();
    Thread load =
        new Thread(
            () -> sendLoad(gateway.getValue(), stop, samples, loadFailure), "faults-gateway-load");
    Thread importer =
        new Thread(() -> importLoop(rig, stop, imports, loadFailure), "faults-importer");
    long t0;
    long downAt;
    long upAt;
    long endAt;
    try {
      load.start();
      Thread.sleep(3000); // warm-up: JIT, connections, the agent's first spans
      importer.start();
      t0 = System.nanoTime();
      Thread.sleep(phase.toMillis());
      downAt = System.nanoTime();
      rig.stopBroker();
      log.printf("  %s: broker stopped; down for %d s%n", NAME, outage.toSeconds());
      log.flush();
      Thread.sleep(Math.max(0, outage.toMillis() - (System.nanoTime() - downAt) / 1_000_000));
      upAt = System.nanoTime();
      rig.startBroker();
      long readyAt = System.nanoTime();
      Thread.sleep(phase.toMillis());
      endAt = System.nanoTime();
      stop.set(true);
      load.join();
      importer.join();
      Thread.sleep(3000); // the exporter's last counters reach its log
      upAt = Math.max(upAt, readyAt);
    } finally {
      stop.set(true);
      gateway.getKey().destroy();
      gateway.getKey().waitFor();
      upstream.stop(0);
    }
    List<String> problems = new ArrayList<>();
    if (loadFailure.get() != null) {
      problems.add("gateway or importer failed: " + loadFailure.get());
    }

    // what reached the topic (read committed: an aborted import must be invisible)
    Map<String, Long> spansPerTrace = new HashMap<>();
    Set<String> spanKeys = new HashSet<>();
    long spanRecords = 0;
    for (ConsumerRecord<byte[], byte[]> record : rig.readAll(LlmlatTopics.SPANS)) {
      try {
        for (ResourceSpans rs : OtlpRecordDecoder.decode(record.value()).getResourceSpansList()) {
          for (ScopeSpans ss : rs.getScopeSpansList()) {
            for (Span s : ss.getSpansList()) {
              String trace = OtelTracesRowEncoder.hex(s.getTraceId());
              spansPerTrace.merge(trace, 1L, Long::sum);
              spanKeys.add(trace + OtelTracesRowEncoder.hex(s.getSpanId()));
              spanRecords++;
            }
          }
        }
      } catch (OtlpRecordDecoder.InvalidRecordException e) {
        problems.add("an undecodable record on the span topic: " + e.getMessage());
      }
    }
    long importSpansClaimed = 0;
    long importSpansFound = 0;
    long importsOk = 0;
    long importsFailedClean = 0;
    Set<String> importTraces = new HashSet<>();
    String failureMessage = "";
    for (Import i : imports) {
      importTraces.addAll(i.traceIds());
      long visible = i.traceIds().stream().mapToLong(t -> spansPerTrace.getOrDefault(t, 0L)).sum();
      long expected = (long) IMPORT_TRACES * SPANS_PER_TRACE;
      if (i.exit() == 0) {
        importsOk++;
        importSpansClaimed += expected;
        importSpansFound += Math.min(visible, expected);
      } else if (visible > 0) {
        problems.add("a failed import left " + visible + " spans behind: " + i.message());
      } else {
        importsFailedClean++;
        if (i.message().isBlank() || !i.message().startsWith("llmlat")) {
          problems.add("a failed import gave no clear message: " + i.message());
        }
        failureMessage = i.message();
      }
    }
    long gatewaySpansInTopic =
        spansPerTrace.entrySet().stream()
            .filter(e -> !importTraces.contains(e.getKey()))
            .mapToLong(Map.Entry::getValue)
            .sum();
    String exporterLog = Files.readString(gatewayLog);
    long gatewaySent = lastNumber(SENT, exporterLog);
    long gatewayDropped = lastNumber(DROPPED, exporterLog);

    Map<String, String> figures = new LinkedHashMap<>();
    figures.put("outage_s", Long.toString(outage.toSeconds()));
    figures.put("gateway_requests", Integer.toString(samples.size()));
    figures.put("latency_ms_before", percentiles(samples, t0, downAt));
    figures.put("latency_ms_down", percentiles(samples, downAt, upAt));
    figures.put("latency_ms_after", percentiles(samples, upAt, endAt));
    figures.put("exporter_spans_sent", Long.toString(gatewaySent));
    figures.put("exporter_spans_dropped", Long.toString(gatewayDropped));
    figures.put("gateway_spans_in_topic", Long.toString(gatewaySpansInTopic));
    figures.put("imports_ok", Long.toString(importsOk));
    figures.put("imports_failed_cleanly", Long.toString(importsFailedClean));
    if (!failureMessage.isEmpty()) {
      figures.put("import_failure", "\"" + failureMessage.replace("\"", "'") + "\"");
    }
    long claimed = importSpansClaimed + gatewaySent;
    long found = importSpansFound + Math.min(gatewaySpansInTopic, gatewaySent);
    long duplicated = spanRecords - spanKeys.size();
    return new FaultResult(
        NAME,
        claimed,
        found - Math.min(found, duplicated),
        claimed - found,
        duplicated,
        0,
        figures,
        problems);
  }

  private static void sendLoad(
      int port, AtomicBoolean stop, List<Sample> samples, AtomicReference<Throwable> failure) {
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(30))
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"model\":\"m\",\"stream\":true,\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
            .build();
    try {
      while (!stop.get()) {
        long start = System.nanoTime();
        HttpResponse<byte[]> r = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
        if (r.statusCode() != 200) {
          throw new IOException("the gateway answered " + r.statusCode());
        }
        samples.add(new Sample(start, System.nanoTime() - start));
        Thread.sleep(10); // ~50-100 requests/s: load, not saturation, on a shared 2-core box
      }
    } catch (Exception e) {
      failure.compareAndSet(null, e);
    }
  }

  private void importLoop(
      FaultRig rig, AtomicBoolean stop, List<Import> imports, AtomicReference<Throwable> failure) {
    Random random = new Random(seed);
    try {
      for (int n = 0; !stop.get(); n++) {
        Path file = rig.dir.resolve("import-" + n + ".otlp.json");
        List<String> traces = OtlpJsonFile.write(file, IMPORT_TRACES, SPANS_PER_TRACE, random);
        CliRun run =
            CliRun.run(
                List.of("import", "otlp-json", file.toString(), "--kafka", rig.bootstrap()),
                rig.dir.resolve("import-" + n + ".log"),
                Duration.ofMinutes(3));
        imports.add(new Import(traces, run.exit(), run.exit() == 0 ? "" : run.message()));
      }
    } catch (Exception e) {
      failure.compareAndSet(null, e);
    }
  }

  /** "p50/p99" of the requests started in [from, to). */
  private static String percentiles(List<Sample> samples, long from, long to) {
    long[] v =
        samples.stream()
            .filter(s -> s.startNanos() >= from && s.startNanos() < to)
            .mapToLong(Sample::latencyNanos)
            .toArray();
    if (v.length == 0) {
      return "none";
    }
    Arrays.sort(v);
    return String.format(
        "%.2f/%.2f",
        v[v.length / 2] / 1e6, v[Math.min(v.length - 1, (int) (v.length * 0.99))] / 1e6);
  }

  private static long lastNumber(Pattern pattern, String text) {
    Matcher m = pattern.matcher(text);
    long last = 0;
    while (m.find()) {
      last = Long.parseLong(m.group(1));
    }
    return last;
  }
}
