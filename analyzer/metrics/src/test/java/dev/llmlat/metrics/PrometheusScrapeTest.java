package dev.llmlat.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.store.EmbeddedClickHouse;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code analyze} over the real H200 capture with the Prometheus endpoint on: a scrape of {@code
 * /metrics} (OpenMetrics text, which carries exemplars) shows per request dimensions the counts and
 * sums that {@code llm_request_attribution} holds, queried from the store here, and exemplars that
 * name attributed requests.
 */
class PrometheusScrapeTest {
  private static final String SERVICE = "llmlat_service";
  private static final String MODEL = "gen_ai_request_model";
  private static final String INSTANCE = "llmlat_engine_instance";
  private static final String TENANT = "llmlat_tenant";
  private static final long SLO_NS = 250_000_000L;

  @TempDir static Path dir;
  static EmbeddedClickHouse store;
  static OpenMetricsText scraped;
  static int written;

  @BeforeAll
  static void analyzeAndScrape() throws IOException, InterruptedException {
    store = EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate());
    H200Capture.importInto(store, dir);
    MetricsConfig config =
        MetricsConfig.builder("llmlat-analyze")
            .prometheus(MetricsConfig.LOOPBACK, freePort())
            .slo(SloThresholds.ttftOnly(Duration.ofNanos(SLO_NS)))
            .build();
    try (MetricsExport metrics = MetricsExport.start(config)) {
      written = new Analyzer(store).analyze(0, Long.MAX_VALUE / 2, true, metrics::record).written();
      HttpResponse<String> response =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create(
                              "http://"
                                  + MetricsConfig.LOOPBACK
                                  + ":"
                                  + config.prometheusPort()
                                  + "/metrics"))
                      .header(
                          "Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8")
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("Content-Type").orElse(""))
          .startsWith("application/openmetrics-text");
      scraped = OpenMetricsText.parse(response.body());
    }
  }

  @AfterAll
  static void close() {
    store.close();
  }

  @Test
  void ttftAndComponentHistogramsHoldTheStoresCountsAndSums() {
    assertThat(written).isEqualTo(16);
    List<List<String>> groups =
        store
            .query(
                "SELECT ServiceName, Model, EngineInstance, Tenant, count(), sum(TtftNs)"
                    + " FROM llm_request_attribution FINAL GROUP BY ServiceName, Model, EngineInstance, Tenant")
            .rows();
    assertThat(groups).isNotEmpty();
    assertThat(series("llmlat_request_ttft_seconds_count", Map.of())).hasSameSizeAs(groups);
    for (List<String> g : groups) {
      Map<String, String> labels = dimensions(g);
      assertThat(value("llmlat_request_ttft_seconds_count", labels))
          .isEqualTo(Double.parseDouble(g.get(4)));
      assertThat(value("llmlat_request_ttft_seconds_sum", labels))
          .isCloseTo(Long.parseLong(g.get(5)) / 1e9, within(1e-6));
      for (TtftComponent component : TtftComponent.all()) {
        List<String> stored =
            store
                .query(
                    "SELECT count(), sum("
                        + component.column()
                        + ") FROM llm_request_attribution FINAL"
                        + " WHERE ServiceName = {s:String} AND Model = {m:String} AND EngineInstance = {i:String} AND Tenant = {t:String}",
                    Map.of("s", g.get(0), "m", g.get(1), "i", g.get(2), "t", g.get(3)))
                .rows()
                .get(0);
        Map<String, String> componentLabels = new HashMap<>(labels);
        componentLabels.put("llmlat_component", component.id());
        assertThat(value("llmlat_request_ttft_component_seconds_count", componentLabels))
            .as(component.id())
            .isEqualTo(Double.parseDouble(stored.get(0)));
        assertThat(value("llmlat_request_ttft_component_seconds_sum", componentLabels))
            .as(component.id())
            .isCloseTo(Long.parseLong(stored.get(1)) / 1e9, within(1e-6));
      }
    }
  }

  @Test
  void gapSloAndQueueCountersHoldTheStoresFigures() throws IOException {
    // the gaps from the capture itself: one per decode step after the first token, ending at the
    // last decode step
    long gaps = 0;
    long gapsNs = 0;
    for (var request : H200Capture.requests()) {
      List<Long> ends = H200Capture.decodeEnds(request.get("trace_id").asText());
      gaps += ends.size();
      gapsNs += ends.get(ends.size() - 1) - request.get("first_token_ns").asLong();
    }
    assertThat(store.query("SELECT sum(ItlCount) FROM llm_request_attribution FINAL").single())
        .isEqualTo(Long.toString(gaps));
    assertThat(total("llmlat_request_itl_seconds_count", Map.of())).isEqualTo(gaps);
    assertThat(total("llmlat_request_itl_seconds_sum", Map.of()))
        .isCloseTo(gapsNs / 1e9, within(1e-6));
    String violations =
        store
            .query("SELECT countIf(TtftNs > " + SLO_NS + ") FROM llm_request_attribution FINAL")
            .single();
    assertThat(Long.parseLong(violations)).isPositive();
    assertThat(total("llmlat_slo_violations_total", Map.of("llmlat_slo_objective", "ttft")))
        .isEqualTo(Double.parseDouble(violations));
    Map<String, Long> queued =
        store
            .query(
                "SELECT kind, sum(ns) FROM llm_request_attribution FINAL"
                    + " ARRAY JOIN QueueCauseKind AS kind, QueueCauseNs AS ns GROUP BY kind")
            .rows()
            .stream()
            .collect(Collectors.toMap(r -> r.get(0), r -> Long.parseLong(r.get(1))));
    assertThat(queued).isNotEmpty();
    for (Map.Entry<String, Long> kind : queued.entrySet()) {
      assertThat(
              total("llmlat_queue_time_seconds_total", Map.of("llmlat_queue_cause", kind.getKey())))
          .as(kind.getKey())
          .isCloseTo(kind.getValue() / 1e9, within(1e-6));
    }
  }

  @Test
  void exemplarsNameAttributedRequestsWithTheirOwnValues() {
    Map<String, Long> ttftByTrace =
        store.query("SELECT TraceId, TtftNs FROM llm_request_attribution FINAL").rows().stream()
            .collect(Collectors.toMap(r -> r.get(0), r -> Long.parseLong(r.get(1))));
    List<OpenMetricsText.Sample> withExemplars =
        scraped.named("llmlat_request_ttft_seconds_bucket").stream()
            .filter(s -> s.exemplar() != null)
            .toList();
    assertThat(withExemplars).isNotEmpty();
    for (OpenMetricsText.Sample s : withExemplars) {
      String traceId = s.exemplar().labels().get("trace_id");
      assertThat(ttftByTrace).containsKey(traceId);
      assertThat(s.exemplar().value()).isCloseTo(ttftByTrace.get(traceId) / 1e9, within(1e-9));
    }
    // the request dimensions of the capture: no tenant attribute on any series (the capture names
    // none)
    assertThat(scraped.samples()).noneMatch(s -> s.labels().containsKey(TENANT));
  }

  /** The Prometheus labels of a stored group: empty values are no label. */
  private static Map<String, String> dimensions(List<String> group) {
    Map<String, String> labels = new HashMap<>();
    String[] keys = {SERVICE, MODEL, INSTANCE, TENANT};
    for (int i = 0; i < keys.length; i++) {
      if (!group.get(i).isEmpty()) {
        labels.put(keys[i], group.get(i));
      }
    }
    return labels;
  }

  private static final Set<String> DIMENSIONS = Set.of(SERVICE, MODEL, INSTANCE, TENANT);

  /**
   * The samples of {@code name} whose request dimensions are exactly {@code dimensions} and that
   * carry {@code others}.
   */
  private static List<OpenMetricsText.Sample> series(String name, Map<String, String> labels) {
    return scraped.named(name).stream()
        .filter(s -> s.labels().entrySet().containsAll(labels.entrySet()))
        .toList();
  }

  private static double value(String name, Map<String, String> labels) {
    List<OpenMetricsText.Sample> matching =
        series(name, labels).stream()
            .filter(
                s ->
                    s.labels().keySet().stream()
                        .filter(DIMENSIONS::contains)
                        .collect(Collectors.toSet())
                        .equals(
                            labels.keySet().stream()
                                .filter(DIMENSIONS::contains)
                                .collect(Collectors.toSet())))
            .toList();
    assertThat(matching).as(name + labels).hasSize(1);
    return matching.get(0).value();
  }

  private static double total(String name, Map<String, String> labels) {
    return series(name, labels).stream().mapToDouble(OpenMetricsText.Sample::value).sum();
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket =
        new ServerSocket(0, 1, InetAddress.getByName(MetricsConfig.LOOPBACK))) {
      return socket.getLocalPort();
    }
  }
}
