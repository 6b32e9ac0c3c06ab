package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.sun.net.httpserver.HttpServer;
import dev.llmlat.semconv.LlmlatMetrics;
import dev.llmlat.testing.ServedRequests;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.metrics.v1.Metric;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code llmlat analyze} with its metrics options: what a one-shot run sends over OTLP at its end,
 * and bad values refused.
 */
class AnalyzeMetricsTest {
  static final long MS = 1_000_000L;
  @TempDir Path dir;

  @Test
  void aRunSendsItsAttributionsOverOtlpAsItEnds() throws IOException {
    List<ServedRequests.Request> requests =
        ServedRequests.generate(5, 40, 1_795_970_300_000_000_000L, 20 * MS, 0, 0.2, Map.of());
    Path file = dir.resolve("served.otlp.jsonl");
    Files.write(file, ServedRequests.otlpJson(requests));
    Path store = dir.resolve("store");
    LlmlatCliTest.Run imported =
        LlmlatCliTest.run(
            "import",
            "otlp-json",
            file.toString(),
            "--to",
            "store",
            "--data-dir",
            store.toString());
    assertThat(imported.exit()).as(imported.err()).isZero();

    List<ExportMetricsServiceRequest> received = new CopyOnWriteArrayList<>();
    HttpServer collector =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    collector.createContext(
        "/v1/metrics",
        exchange -> {
          received.add(
              ExportMetricsServiceRequest.parseFrom(exchange.getRequestBody().readAllBytes()));
          exchange.sendResponseHeaders(200, -1);
          exchange.close();
        });
    collector.start();
    LlmlatCliTest.Run analyzed;
    try {
      analyzed =
          LlmlatCliTest.run(
              "analyze",
              "--data-dir",
              store.toString(),
              "--metrics-otlp-endpoint",
              "http://127.0.0.1:" + collector.getAddress().getPort(),
              "--metrics-otlp-interval",
              "1h",
              "--slo-ttft",
              "40");
    } finally {
      collector.stop(0);
    }
    assertThat(analyzed.exit()).as(analyzed.err()).isZero();
    assertThat(analyzed.out())
        .contains("attribution metrics: OTLP to http://127.0.0.1:")
        .contains("attributed 40 requests");

    assertThat(received).as("one export, at the end (the interval is an hour)").hasSize(1);
    Map<String, Metric> metrics = new HashMap<>();
    received
        .get(0)
        .getResourceMetricsList()
        .forEach(
            rm ->
                rm.getScopeMetricsList()
                    .forEach(sm -> sm.getMetricsList().forEach(m -> metrics.put(m.getName(), m))));
    LlmlatCliTest.Run stored =
        LlmlatCliTest.run(
            "sql",
            "--data-dir",
            store.toString(),
            "--format",
            "tsv",
            "SELECT count(), sum(TtftNs), sum(ItlCount), countIf(TtftNs > 40000000) FROM llm_request_attribution FINAL");
    String[] row = stored.out().lines().toList().get(1).split("\t");
    var ttft = metrics.get(LlmlatMetrics.TTFT).getExponentialHistogram().getDataPointsList();
    assertThat(ttft.stream().mapToLong(p -> p.getCount()).sum())
        .isEqualTo(Long.parseLong(row[0]))
        .isEqualTo(40);
    assertThat(ttft.stream().mapToDouble(p -> p.getSum()).sum())
        .isCloseTo(Long.parseLong(row[1]) / 1e9, within(1e-6));
    long gaps = requests.stream().mapToLong(r -> r.gapsNs().length).sum();
    var itl = metrics.get(LlmlatMetrics.ITL).getExponentialHistogram().getDataPointsList();
    assertThat(itl.stream().mapToLong(p -> p.getCount()).sum())
        .isEqualTo(gaps)
        .isEqualTo(Long.parseLong(row[2]));
    long violations =
        metrics.get(LlmlatMetrics.SLO_VIOLATIONS).getSum().getDataPointsList().stream()
            .mapToLong(p -> p.getAsInt())
            .sum();
    assertThat(violations).isEqualTo(Long.parseLong(row[3]));
  }

  @Test
  void badMetricsOptionsAreRefusedNamingThem() {
    Path store = LlmlatCliTest.store(dir.resolve("store"));
    LlmlatCliTest.Run port =
        LlmlatCliTest.run("analyze", "--data-dir", store.toString(), "--metrics-port", "0");
    assertThat(port.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(port.err()).contains("metrics port must be 1 to 65535, got 0");
    LlmlatCliTest.Run endpoint =
        LlmlatCliTest.run(
            "analyze", "--data-dir", store.toString(), "--metrics-otlp-endpoint", "collector:4318");
    assertThat(endpoint.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(endpoint.err())
        .contains(
            "OTLP metrics endpoint must be an http:// or https:// URL with a host, got 'collector:4318'");
    LlmlatCliTest.Run slo =
        LlmlatCliTest.run("analyze", "--data-dir", store.toString(), "--slo-ttft", "-5");
    assertThat(slo.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(slo.err()).contains("--slo-ttft must be above 0 ms");
  }
}
