package dev.llmlat.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.sun.net.httpserver.HttpServer;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.QueueBreakdown;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatMetrics;
import dev.llmlat.semconv.TtftComponent;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link MetricsExport}: what it sends to a collector's {@code /v1/metrics} (decoded as OTLP
 * protobuf), and a port it cannot have.
 */
class MetricsExportTest {
  private final List<ExportMetricsServiceRequest> received = new CopyOnWriteArrayList<>();
  private HttpServer collector;

  @AfterEach
  void stop() {
    if (collector != null) {
      collector.stop(0);
    }
  }

  @Test
  void aTakenPortIsRefusedNamingIt() throws IOException {
    try (ServerSocket taken =
        new ServerSocket(0, 1, InetAddress.getByName(MetricsConfig.LOOPBACK))) {
      MetricsConfig config =
          MetricsConfig.builder("x")
              .prometheus(MetricsConfig.LOOPBACK, taken.getLocalPort())
              .build();
      assertThatThrownBy(() -> MetricsExport.start(config))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith(
              "cannot serve metrics on 127.0.0.1:" + taken.getLocalPort() + ": ");
    }
  }

  @Test
  void closingSendsTheExponentialHistogramsWithTheRequestDimensionsAndExemplars()
      throws IOException {
    collector = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    collector.createContext(
        MetricsConfig.OTLP_METRICS_PATH,
        exchange -> {
          received.add(
              ExportMetricsServiceRequest.parseFrom(exchange.getRequestBody().readAllBytes()));
          exchange.sendResponseHeaders(200, -1);
          exchange.close();
        });
    collector.start();
    // a base URL: the exporter adds /v1/metrics, as OpenTelemetry's base endpoint does
    URI endpoint = URI.create("http://127.0.0.1:" + collector.getAddress().getPort());
    MetricsConfig config =
        MetricsConfig.builder("llmlat-attribute")
            .otlp(endpoint)
            .otlpInterval(Duration.ofHours(1))
            .build();
    assertThat(config.otlpEndpoint().getPath()).isEqualTo(MetricsConfig.OTLP_METRICS_PATH);

    String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    try (MetricsExport export = MetricsExport.start(config)) {
      export.record(attribution(trace, 300_000_000L));
      export.record(attribution("0af7651916cd43dd8448eb211c80319c", 700_000_000L));
    } // the interval is an hour: only the close sends

    assertThat(received).hasSize(1);
    Map<String, Metric> metrics = new LinkedHashMap<>();
    received
        .get(0)
        .getResourceMetricsList()
        .forEach(
            rm ->
                rm.getScopeMetricsList()
                    .forEach(sm -> sm.getMetricsList().forEach(m -> metrics.put(m.getName(), m))));
    assertThat(received.get(0).getResourceMetrics(0).getResource().getAttributesList())
        .anySatisfy(
            kv ->
                assertThat(kv.getKey() + "=" + kv.getValue().getStringValue())
                    .isEqualTo("service.name=llmlat-attribute"));
    Metric ttft = metrics.get(LlmlatMetrics.TTFT);
    assertThat(ttft.getUnit()).isEqualTo("s");
    assertThat(ttft.hasExponentialHistogram()).isTrue();
    ExponentialHistogramDataPoint point = ttft.getExponentialHistogram().getDataPoints(0);
    assertThat(point.getCount()).isEqualTo(2);
    assertThat(point.getSum()).isCloseTo(1.0, within(1e-9));
    assertThat(attributes(point.getAttributesList()))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                LlmlatMetrics.SERVICE,
                "engine",
                LlmlatMetrics.MODEL,
                "tiny",
                LlmlatMetrics.ENGINE_INSTANCE,
                "vm:4711",
                LlmlatAttributes.TENANT,
                "tenant-a"));
    assertThat(point.getExemplarsList())
        .isNotEmpty()
        .allSatisfy(
            e ->
                assertThat(HexFormat.of().formatHex(e.getTraceId().toByteArray()))
                    .isIn(trace, "0af7651916cd43dd8448eb211c80319c"));
    assertThat(metrics.get(LlmlatMetrics.SLO_VIOLATIONS).getSum().getDataPoints(0).getAsInt())
        .isEqualTo(1); // 700 ms > 500 ms
    assertThat(metrics).containsKeys(LlmlatMetrics.TTFT_COMPONENT, LlmlatMetrics.QUEUE_TIME);
  }

  private static Map<String, String> attributes(List<KeyValue> list) {
    Map<String, String> out = new LinkedHashMap<>();
    list.forEach(kv -> out.put(kv.getKey(), kv.getValue().getStringValue()));
    return out;
  }

  private static Attribution attribution(String traceId, long queueNs) {
    Map<String, Long> components = new LinkedHashMap<>();
    TtftComponent.all()
        .forEach(c -> components.put(c.id(), c == TtftComponent.QUEUE ? queueNs : 0L));
    QueueBreakdown queue =
        new QueueBreakdown(
            List.of(new QueueBreakdown.Part(QueueBreakdown.DECODE, "decode", queueNs, "", 0, 4, 3)),
            "");
    return Attribution.builder()
        .traceId(traceId)
        .requestId("req")
        .model("tiny")
        .service("engine")
        .engineInstance("vm:4711")
        .engineAdapter("llmlat")
        .ttftNs(queueNs)
        .serverTtftNs(queueNs)
        .components(components)
        .promptTokens(10)
        .outputTokens(1)
        .prefillChunks(1)
        .queueBreakdown(queue)
        .tenant("tenant-a")
        .build();
  }
}
