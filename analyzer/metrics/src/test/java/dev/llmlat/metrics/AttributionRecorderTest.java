package dev.llmlat.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.QueueBreakdown;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatMetrics;
import dev.llmlat.semconv.TtftComponent;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.metrics.ExemplarFilter;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.SdkMeterProviderBuilder;
import io.opentelemetry.sdk.metrics.data.ExemplarData;
import io.opentelemetry.sdk.metrics.data.ExponentialHistogramPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.MetricDataType;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class AttributionRecorderTest {
  private static final AttributeKey<String> SERVICE = AttributeKey.stringKey(LlmlatMetrics.SERVICE);
  private static final AttributeKey<String> MODEL = AttributeKey.stringKey(LlmlatMetrics.MODEL);
  private static final AttributeKey<String> INSTANCE =
      AttributeKey.stringKey(LlmlatMetrics.ENGINE_INSTANCE);
  private static final AttributeKey<String> TENANT =
      AttributeKey.stringKey(LlmlatAttributes.TENANT);
  private static final AttributeKey<String> COMPONENT =
      AttributeKey.stringKey(LlmlatMetrics.COMPONENT);
  private static final AttributeKey<String> OBJECTIVE =
      AttributeKey.stringKey(LlmlatMetrics.SLO_OBJECTIVE);
  private static final AttributeKey<String> CAUSE =
      AttributeKey.stringKey(LlmlatMetrics.QUEUE_CAUSE);
  private static final AttributeKey<Boolean> OVERFLOW =
      AttributeKey.booleanKey(LlmlatMetrics.OVERFLOW);

  private static final String TRACE_A = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String TRACE_B = "0af7651916cd43dd8448eb211c80319c";
  private static final String TRACE_C = "a3ce929d0e0e47360000000000000000";

  private final InMemoryMetricReader reader = InMemoryMetricReader.create();
  private SdkMeterProvider provider;

  @AfterEach
  void close() {
    provider.close();
  }

  private AttributionRecorder recorder(int maxSeries, SloThresholds slo) {
    SdkMeterProviderBuilder builder =
        SdkMeterProvider.builder()
            .registerMetricReader(reader)
            .setExemplarFilter(ExemplarFilter.traceBased());
    provider = AttributionViews.register(builder, maxSeries).build();
    return new AttributionRecorder(provider.get(AttributionRecorder.SCOPE), slo);
  }

  @Test
  void recordsTtftComponentsGapsViolationsAndQueueCausesPerRequestDimensions() {
    AttributionRecorder recorder =
        recorder(100, new SloThresholds(Duration.ofMillis(500), Duration.ofMillis(20)));
    // tenant-a: 600 ms (over the TTFT objective), gaps 10 + 40 ms (mean 25 ms, over the TPOT
    // objective)
    recorder.record(
        attribution(
            TRACE_A,
            "tenant-a",
            Map.of("queue", 400_000_000L, "prefill_gpu", 200_000_000L),
            List.of(10_000_000L, 40_000_000L),
            List.of(
                part(QueueBreakdown.PREFILL, 300_000_000L),
                part(QueueBreakdown.DECODE, 100_000_000L))));
    // tenant-a again: 500 ms is not above the objective; gaps 20 + 20 ms equal the TPOT objective
    recorder.record(
        attribution(
            TRACE_B,
            "tenant-a",
            Map.of("queue", 100_000_000L, "prefill_gpu", 400_000_000L),
            List.of(20_000_000L, 20_000_000L),
            List.of(part(QueueBreakdown.PREFILL, 100_000_000L))));
    // no tenant: 50 ms, no gaps, no queue
    recorder.record(
        attribution(TRACE_C, "", Map.of("prefill_gpu", 50_000_000L), List.of(), List.of()));

    Collection<MetricData> metrics = reader.collectAllMetrics();
    Attributes tenantA =
        Attributes.of(SERVICE, "engine", MODEL, "tiny", INSTANCE, "vm:4711", TENANT, "tenant-a");
    Attributes noTenant = Attributes.of(SERVICE, "engine", MODEL, "tiny", INSTANCE, "vm:4711");

    MetricData ttft = metric(metrics, LlmlatMetrics.TTFT);
    assertThat(ttft.getType()).isEqualTo(MetricDataType.EXPONENTIAL_HISTOGRAM);
    assertThat(ttft.getUnit()).isEqualTo("s");
    assertThat(histogram(ttft, tenantA).getCount()).isEqualTo(2);
    assertThat(histogram(ttft, tenantA).getSum()).isCloseTo(1.1, within(1e-9));
    assertThat(histogram(ttft, noTenant).getCount()).isEqualTo(1);
    assertThat(histogram(ttft, noTenant).getSum()).isCloseTo(0.05, within(1e-9));

    MetricData components = metric(metrics, LlmlatMetrics.TTFT_COMPONENT);
    // every component of every request, zero included: 19 series per request dimensions
    assertThat(components.getExponentialHistogramData().getPoints())
        .hasSize(2 * TtftComponent.all().size());
    assertThat(histogram(components, with(tenantA, COMPONENT, "queue")).getSum())
        .isCloseTo(0.5, within(1e-9));
    assertThat(histogram(components, with(tenantA, COMPONENT, "queue")).getCount()).isEqualTo(2);
    assertThat(histogram(components, with(tenantA, COMPONENT, "prefill_gpu")).getSum())
        .isCloseTo(0.6, within(1e-9));
    assertThat(histogram(components, with(tenantA, COMPONENT, "network_in")).getCount())
        .isEqualTo(2);
    assertThat(histogram(components, with(tenantA, COMPONENT, "network_in")).getZeroCount())
        .isEqualTo(2);
    assertThat(histogram(components, with(noTenant, COMPONENT, "prefill_gpu")).getSum())
        .isCloseTo(0.05, within(1e-9));

    MetricData itl = metric(metrics, LlmlatMetrics.ITL);
    assertThat(histogram(itl, tenantA).getCount()).isEqualTo(4);
    assertThat(histogram(itl, tenantA).getSum()).isCloseTo(0.09, within(1e-9));
    assertThat(itl.getExponentialHistogramData().getPoints()).hasSize(1); // no gaps, no point

    MetricData violations = metric(metrics, LlmlatMetrics.SLO_VIOLATIONS);
    assertThat(longSums(violations))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                with(tenantA, OBJECTIVE, LlmlatMetrics.OBJECTIVE_TTFT), 1L,
                with(tenantA, OBJECTIVE, LlmlatMetrics.OBJECTIVE_TPOT), 1L));

    MetricData queue = metric(metrics, LlmlatMetrics.QUEUE_TIME);
    Map<Attributes, Double> queued =
        queue.getDoubleSumData().getPoints().stream()
            .collect(Collectors.toMap(PointData::getAttributes, p -> p.getValue()));
    assertThat(queued).hasSize(2);
    assertThat(queued.get(with(tenantA, CAUSE, QueueBreakdown.PREFILL)))
        .isCloseTo(0.4, within(1e-9));
    assertThat(queued.get(with(tenantA, CAUSE, QueueBreakdown.DECODE)))
        .isCloseTo(0.1, within(1e-9));
  }

  @Test
  void exemplarsNameTheRecordedRequestsTraces() {
    AttributionRecorder recorder = recorder(100, SloThresholds.ttftOnly(Duration.ofMillis(500)));
    recorder.record(
        attribution(TRACE_A, "t", Map.of("queue", 700_000_000L), List.of(5_000_000L), List.of()));
    recorder.record(
        attribution(TRACE_B, "t", Map.of("queue", 800_000_000L), List.of(6_000_000L), List.of()));
    recorder.record(
        attribution(TRACE_C, "t", Map.of("queue", 900_000_000L), List.of(7_000_000L), List.of()));
    recorder.record(
        attribution("not-a-trace-id", "t", Map.of("queue", 1_000_000_000L), List.of(), List.of()));

    Collection<MetricData> metrics = reader.collectAllMetrics();
    for (String name : List.of(LlmlatMetrics.TTFT, LlmlatMetrics.ITL)) {
      List<? extends ExemplarData> exemplars =
          metric(metrics, name)
              .getExponentialHistogramData()
              .getPoints()
              .iterator()
              .next()
              .getExemplars();
      assertThat(exemplars).isNotEmpty();
      assertThat(exemplars)
          .allSatisfy(
              e -> assertThat(e.getSpanContext().getTraceId()).isIn(TRACE_A, TRACE_B, TRACE_C));
    }
    List<? extends ExemplarData> ttft =
        metric(metrics, LlmlatMetrics.TTFT)
            .getExponentialHistogramData()
            .getPoints()
            .iterator()
            .next()
            .getExemplars();
    // the SDK samples (its reservoir holds as many as the machine has processors); the span id
    // stands in for the
    // request: the trace id's low half, else its high half
    Map<String, String> spanOf =
        Map.of(
            TRACE_A, "a3ce929d0e0e4736", TRACE_B, "8448eb211c80319c", TRACE_C, "a3ce929d0e0e4736");
    assertThat(ttft)
        .allSatisfy(
            e ->
                assertThat(e.getSpanContext().getSpanId())
                    .isEqualTo(spanOf.get(e.getSpanContext().getTraceId())));
    // the violation counter's exemplars name the violating requests too
    List<? extends ExemplarData> violated =
        metric(metrics, LlmlatMetrics.SLO_VIOLATIONS)
            .getLongSumData()
            .getPoints()
            .iterator()
            .next()
            .getExemplars();
    assertThat(violated)
        .isNotEmpty()
        .allSatisfy(
            e -> assertThat(e.getSpanContext().getTraceId()).isIn(TRACE_A, TRACE_B, TRACE_C));
  }

  @Test
  void attributeSetsBeyondTheLimitGoToTheOverflowSeries() {
    int limit = 4;
    AttributionRecorder recorder = recorder(limit, SloThresholds.ttftOnly(Duration.ofMillis(500)));
    int services = 10;
    for (int i = 0; i < services; i++) {
      recorder.record(
          attribution(
              TRACE_A,
              "",
              "service-" + i,
              Map.of("queue", (i + 1) * 1_000_000L),
              List.of(),
              List.of()));
    }
    MetricData ttft = metric(reader.collectAllMetrics(), LlmlatMetrics.TTFT);
    Collection<ExponentialHistogramPointData> points =
        ttft.getExponentialHistogramData().getPoints();
    // the specification's limit counts the overflow series: limit - 1 sets of their own, the rest
    // merged
    assertThat(points).hasSize(limit);
    List<ExponentialHistogramPointData> overflow =
        points.stream().filter(p -> Boolean.TRUE.equals(p.getAttributes().get(OVERFLOW))).toList();
    assertThat(overflow).hasSize(1);
    assertThat(overflow.get(0).getAttributes()).isEqualTo(Attributes.of(OVERFLOW, true));
    assertThat(overflow.get(0).getCount()).isEqualTo(services - (limit - 1));
    // nothing is lost: the counts and sums over all series are every request's
    assertThat(points.stream().mapToLong(ExponentialHistogramPointData::getCount).sum())
        .isEqualTo(services);
    double expectedSum = 0;
    for (int i = 0; i < services; i++) {
      expectedSum += (i + 1) / 1000.0;
    }
    assertThat(points.stream().mapToDouble(ExponentialHistogramPointData::getSum).sum())
        .isCloseTo(expectedSum, within(1e-9));
    Set<String> own =
        points.stream()
            .map(p -> p.getAttributes().get(SERVICE))
            .filter(s -> s != null)
            .collect(Collectors.toSet());
    assertThat(own).hasSize(limit - 1);
  }

  private static QueueBreakdown.Part part(String kind, long ns) {
    return new QueueBreakdown.Part(kind, kind, ns, "", 0, 0, 0);
  }

  private static Attribution attribution(
      String traceId,
      String tenant,
      Map<String, Long> components,
      List<Long> gaps,
      List<QueueBreakdown.Part> queue) {
    return attribution(traceId, tenant, "engine", components, gaps, queue);
  }

  private static Attribution attribution(
      String traceId,
      String tenant,
      String service,
      Map<String, Long> components,
      List<Long> gaps,
      List<QueueBreakdown.Part> queue) {
    Map<String, Long> all = new LinkedHashMap<>();
    TtftComponent.all().forEach(c -> all.put(c.id(), components.getOrDefault(c.id(), 0L)));
    long ttft = all.values().stream().mapToLong(Long::longValue).sum();
    List<Attribution.Gap> itl = new java.util.ArrayList<>();
    long t = 0;
    for (int i = 0; i < gaps.size(); i++) {
      t += gaps.get(i);
      itl.add(new Attribution.Gap(i + 1, t, gaps.get(i), ""));
    }
    return Attribution.builder()
        .traceId(traceId)
        .requestId("req")
        .model("tiny")
        .service(service)
        .engineInstance("vm:4711")
        .engineAdapter("llmlat")
        .ttftNs(ttft)
        .serverTtftNs(ttft)
        .components(all)
        .itl(itl)
        .promptTokens(10)
        .outputTokens(gaps.size() + 1)
        .prefillChunks(1)
        .queueBreakdown(new QueueBreakdown(queue, ""))
        .tenant(tenant)
        .build();
  }

  private static MetricData metric(Collection<MetricData> metrics, String name) {
    return metrics.stream()
        .filter(m -> m.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + name));
  }

  private static ExponentialHistogramPointData histogram(MetricData metric, Attributes attributes) {
    return metric.getExponentialHistogramData().getPoints().stream()
        .filter(p -> p.getAttributes().equals(attributes))
        .findFirst()
        .orElseThrow(
            () -> new AssertionError("no " + metric.getName() + " point with " + attributes));
  }

  private static Map<Attributes, Long> longSums(MetricData metric) {
    return metric.getLongSumData().getPoints().stream()
        .collect(Collectors.toMap(PointData::getAttributes, p -> p.getValue()));
  }

  private static <T> Attributes with(Attributes base, AttributeKey<T> key, T value) {
    return base.toBuilder().put(key, value).build();
  }
}
