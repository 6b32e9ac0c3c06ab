package dev.llmlat.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.engine.DemoEngine;
import dev.llmlat.engine.EngineConfig;
import dev.llmlat.engine.ExporterKind;
import dev.llmlat.load.SyntheticPrompts.Length;
import dev.llmlat.otlpkafka.SpanPublisher;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.testing.Await;
import dev.llmlat.testing.KafkaBrokerExtension;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Load against the real demo engine: every measured request is one CLIENT span, shipped through a
 * real broker keyed by its trace id, that the engine's own spans join (the engine's request span is
 * its child: traceparent honoured); the summary's tokens are the engine's; the result file's
 * figures are the spans', recomputed here from what the topic holds.
 */
class LoadRunTest {
  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();
  private static final ObjectMapper JSON = new ObjectMapper();

  private static EngineConfig.Builder engine() {
    return EngineConfig.builder().port(0).model("tinylm").maxNumSeqs(8).timeScale(0.05);
  }

  @Test
  void everyRequestIsAClientSpanThatTheEnginesSpansJoin() throws Exception {
    String topic = "load_joined";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, topic, 2);
    }
    int requests = 12;
    LoadResult result;
    EngineConfig engineConfig =
        engine()
            .exporter(ExporterKind.KAFKA)
            .kafkaBootstrap(broker.bootstrapServers())
            .topic(topic)
            .build();
    try (DemoEngine engine = DemoEngine.start(engineConfig);
        SpanPublisher publisher = new SpanPublisher(broker.bootstrapServers(), topic)) {
      LoadConfig config =
          LoadConfig.builder(Target.parse(engine.baseUri().toString(), null), "tinylm")
              .shape(new LoadShape.Constant(25))
              .requests(requests)
              .warmup(2)
              .build();
      SpanShipper shipper = new SpanShipper(publisher::publish);
      result =
          LoadRun.start(
                  config,
                  new SyntheticPrompts(new Length(40, 15), new Length(10, 4), 7),
                  shipper,
                  LoadRun.Listener.NONE)
              .await();
      shipper.close();
      publisher.flush();
      assertThat(shipper.shipped()).isEqualTo(requests);
      assertThat(engine.flushSpans(Duration.ofSeconds(20))).isTrue();
    }
    assertThat(result.warmups()).isEqualTo(2);
    assertThat(result.outcomes())
        .hasSize(requests)
        .allSatisfy(r -> assertThat(r.failure()).isNull());

    List<TopicSpans.Read> read =
        TopicSpans.readUntil(
            broker.bootstrapServers(),
            topic,
            spans ->
                spans.stream()
                            .filter(s -> "client".equals(s.resourceAttr(LlmlatAttributes.LAYER)))
                            .count()
                        == requests
                    && spans.stream().filter(s -> s.span().getName().equals("llm_request")).count()
                        >= requests);
    Map<String, TopicSpans.Read> clients = new HashMap<>();
    Map<String, TopicSpans.Read> engineRequests = new HashMap<>();
    for (TopicSpans.Read s : read) {
      if ("client".equals(s.resourceAttr(LlmlatAttributes.LAYER))) {
        clients.put(s.traceId(), s);
      } else if (s.span().getName().equals("llm_request")) {
        engineRequests.put(s.traceId(), s);
      }
    }
    // warm-up requests went with an unsampled traceparent: the engine recorded only the measured
    // ones
    assertThat(engineRequests.keySet()).isEqualTo(clients.keySet());

    long engineInput = 0;
    long engineOutput = 0;
    for (TopicSpans.Read c : clients.values()) {
      Span span = c.span();
      assertThat(c.key())
          .isEqualTo(c.traceId()); // keyed by trace id, like every other layer's records
      assertThat(span.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_CLIENT);
      assertThat(span.getParentSpanId().isEmpty()).isTrue(); // the trace's root
      assertThat(c.resourceAttr("service.name")).isEqualTo("llmlat-load");
      assertThat(c.resourceAttr("host.name")).isNotBlank();
      assertThat(c.resourceAttr("process.pid"))
          .isEqualTo(Long.toString(ProcessHandle.current().pid()));
      assertThat(c.attr("gen_ai.request.model")).isEqualTo("tinylm");
      assertThat(c.attr("http.response.status_code")).isEqualTo("200");
      assertThat(span.getStatus().getCode().getNumber()).isZero(); // unset: no error

      TopicSpans.Read server = engineRequests.get(c.traceId());
      assertThat(server.parentSpanId())
          .isEqualTo(c.spanId()); // the engine's parent is the client span: traceparent honoured
      long headers = c.event(LlmlatAttributes.EVENT_CLIENT_RESPONSE_HEADERS);
      long first = c.event(LlmlatAttributes.EVENT_CLIENT_FIRST_CHUNK);
      assertThat(span.getStartTimeUnixNano()).isLessThanOrEqualTo(headers);
      assertThat(headers).isLessThanOrEqualTo(first);
      assertThat(first).isLessThanOrEqualTo(span.getEndTimeUnixNano());

      long chunks = Long.parseLong(c.attr(LlmlatAttributes.CLIENT_CHUNKS));
      long engineTokens = Long.parseLong(server.attr("gen_ai.usage.output_tokens"));
      assertThat(chunks)
          .isEqualTo(engineTokens); // one content chunk per token the engine generated
      assertThat(c.longs(LlmlatAttributes.CLIENT_CHUNK_DELTAS_NS))
          .hasSize((int) chunks - 1)
          .allSatisfy(d -> assertThat(d).isNotNegative());
      assertThat(c.attr("gen_ai.usage.output_tokens")).isEqualTo(Long.toString(engineTokens));
      assertThat(c.attr("gen_ai.usage.input_tokens"))
          .isEqualTo(server.attr("gen_ai.usage.input_tokens"));
      assertThat(c.attr("gen_ai.request.max_tokens"))
          .isEqualTo(server.attr("gen_ai.request.max_tokens"));
      engineInput += Long.parseLong(server.attr("gen_ai.usage.input_tokens"));
      engineOutput += engineTokens;
      // no prompt text: every attribute is short and none holds a run of the prompt's words
      span.getAttributesList()
          .forEach(a -> assertThat(a.getValue().toString()).doesNotContainPattern("([a-z]+ ){4}"));
    }

    ServingMetrics metrics = ServingMetrics.of(result);
    assertThat(metrics.completed()).isEqualTo(requests);
    assertThat(metrics.failed()).isZero();
    assertThat(metrics.totalInput()).isEqualTo(engineInput);
    assertThat(metrics.totalOutput()).isEqualTo(engineOutput);

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    ResultFile.write(ResultFile.of(result, metrics), bytes);
    JsonNode saved = JSON.readTree(bytes.toByteArray());
    assertThat(saved.fieldNames())
        .toIterable()
        .contains(
            "date",
            "backend",
            "model_id",
            "num_prompts",
            "request_rate",
            "burstiness",
            "max_concurrency",
            "duration",
            "completed",
            "failed",
            "total_input_tokens",
            "total_output_tokens",
            "request_throughput",
            "request_goodput",
            "output_throughput",
            "total_token_throughput",
            "input_lens",
            "output_lens",
            "ttfts",
            "itls",
            "latencies",
            "start_times",
            "errors",
            "mean_ttft_ms",
            "median_ttft_ms",
            "std_ttft_ms",
            "p99_ttft_ms",
            "mean_tpot_ms",
            "median_tpot_ms",
            "p99_tpot_ms",
            "mean_itl_ms",
            "median_itl_ms",
            "p99_itl_ms",
            "mean_e2el_ms",
            "p99_e2el_ms",
            "max_output_tokens_per_s",
            "max_concurrent_requests");
    assertThat(saved.get("backend").asText()).isEqualTo("openai-chat");
    assertThat(saved.get("completed").asInt()).isEqualTo(requests);
    assertThat(saved.get("request_goodput").isNull()).isTrue(); // no SLO given
    assertThat(saved.get("total_input_tokens").asLong()).isEqualTo(engineInput);
    assertThat(saved.get("total_output_tokens").asLong()).isEqualTo(engineOutput);

    // recompute vLLM's figures from the spans alone (milliseconds; ITL pooled over requests)
    double[] ttfts = new double[requests];
    List<Double> itls = new ArrayList<>();
    List<Double> tpots = new ArrayList<>();
    double[] e2els = new double[requests];
    for (int i = 0; i < requests; i++) {
      String trace = saved.get("llmlat_trace_ids").get(i).asText();
      TopicSpans.Read c = clients.get(trace);
      long start = c.span().getStartTimeUnixNano();
      long first = c.event(LlmlatAttributes.EVENT_CLIENT_FIRST_CHUNK);
      List<Long> deltas = c.longs(LlmlatAttributes.CLIENT_CHUNK_DELTAS_NS);
      long last = first + deltas.stream().mapToLong(Long::longValue).sum();
      ttfts[i] = (first - start) / 1e6;
      e2els[i] = (last - start) / 1e6;
      deltas.forEach(d -> itls.add(d / 1e6));
      int out = deltas.size() + 1;
      if (out > 1) {
        tpots.add((last - first) / 1e6 / (out - 1));
      }
      assertThat(saved.get("ttfts").get(i).asDouble()).isCloseTo(ttfts[i] / 1e3, within(1e-12));
      assertThat(saved.get("itls").get(i)).hasSize(deltas.size());
      assertThat(saved.get("output_lens").get(i).asLong())
          .isEqualTo(Long.parseLong(engineRequests.get(trace).attr("gen_ai.usage.output_tokens")));
      assertThat(saved.get("errors").get(i).asText()).isEmpty();
      assertThat(saved.get("llmlat_span_ids").get(i).asText()).isEqualTo(c.spanId());
    }
    assertThat(saved.get("mean_ttft_ms").asDouble()).isCloseTo(mean(ttfts), within(1e-9));
    assertThat(saved.get("median_ttft_ms").asDouble())
        .isCloseTo(numpyPercentile(ttfts, 50), within(1e-9));
    assertThat(saved.get("p90_ttft_ms").asDouble())
        .isCloseTo(numpyPercentile(ttfts, 90), within(1e-9));
    assertThat(saved.get("p99_ttft_ms").asDouble())
        .isCloseTo(numpyPercentile(ttfts, 99), within(1e-9));
    assertThat(saved.get("std_ttft_ms").asDouble()).isCloseTo(populationStd(ttfts), within(1e-9));
    double[] itl = itls.stream().mapToDouble(Double::doubleValue).toArray();
    assertThat(saved.get("mean_itl_ms").asDouble()).isCloseTo(mean(itl), within(1e-9));
    assertThat(saved.get("p99_itl_ms").asDouble())
        .isCloseTo(numpyPercentile(itl, 99), within(1e-9));
    assertThat(saved.get("mean_tpot_ms").asDouble())
        .isCloseTo(mean(tpots.stream().mapToDouble(Double::doubleValue).toArray()), within(1e-9));
    assertThat(saved.get("mean_e2el_ms").asDouble()).isCloseTo(mean(e2els), within(1e-9));
    assertThat(saved.get("request_throughput").asDouble())
        .isCloseTo(requests / saved.get("duration").asDouble(), within(1e-9));

    // goodput against an SLO at the TTFTs' median: the requests at or under it are good
    double slo = numpyPercentile(ttfts, 50);
    LoadConfig withSlo =
        LoadConfig.builder(result.config().target(), "tinylm")
            .shape(result.config().shape())
            .requests(requests)
            .slo(new Slo(Slo.millis(slo, "--slo-ttft"), null))
            .build();
    ServingMetrics good =
        ServingMetrics.of(
            new LoadResult(
                withSlo,
                result.prompts(),
                result.outcomes(),
                result.phaseStartNanos(),
                result.durationNanos(),
                false,
                0,
                0,
                null,
                result.clock()));
    long meeting = Arrays.stream(ttfts).filter(t -> t <= slo + 1e-6).count();
    assertThat(good.good()).isEqualTo((int) meeting);
    assertThat(good.goodFraction().proportion()).isEqualTo(meeting / (double) requests);
    assertThat(good.goodFraction().low()).isLessThan(good.goodFraction().proportion());
    assertThat(good.goodFraction().high()).isGreaterThan(good.goodFraction().proportion());
    assertThat(good.requestGoodput())
        .isCloseTo(meeting / (result.durationNanos() / 1e9), within(1e-9));
  }

  @Test
  void theLegacyCompletionsApiInAClosedLoopNeverExceedsItsClients() throws Exception {
    int clients = 3;
    LoadResult result;
    try (DemoEngine engine = DemoEngine.start(engine().exporter(ExporterKind.NONE).build())) {
      LoadConfig config =
          LoadConfig.builder(Target.parse(engine.baseUri() + "/v1/completions", null), "tinylm")
              .shape(new LoadShape.Closed(clients))
              .requests(9)
              .build();
      result =
          LoadRun.start(
                  config,
                  new SyntheticPrompts(new Length(30, 0), new Length(6, 3), 3),
                  null,
                  LoadRun.Listener.NONE)
              .await();
    }
    assertThat(result.config().target().endpoint()).isEqualTo(Endpoint.COMPLETIONS);
    assertThat(result.outcomes())
        .hasSize(9)
        .allSatisfy(
            r -> {
              assertThat(r.failure()).isNull();
              assertThat(r.usageCompletionTokens())
                  .isEqualTo(r.maxTokens()); // the demo engine generates exactly max_tokens
              assertThat(r.chunks()).isEqualTo(r.maxTokens());
              assertThat(r.usagePromptTokens())
                  .isEqualTo(30); // 30 words, one token each by the engine's count
            });
    ServingMetrics m = ServingMetrics.of(result);
    assertThat(m.maxConcurrentRequests()).isBetween(1, clients);
    assertThat(m.totalInput()).isEqualTo(9 * 30);
  }

  @Test
  void stopSendsNoMoreCancelsWhatIsInFlightAndKeepsWhatFinished() throws Exception {
    AtomicInteger done = new AtomicInteger();
    LoadResult result;
    try (DemoEngine engine = DemoEngine.start(engine().exporter(ExporterKind.NONE).build())) {
      // the first three requests are short, every later one far longer than the test: when the
      // third
      // ends, the fourth (sent with the first three) is still streaming, so there is something to
      // cancel
      LoadConfig config =
          LoadConfig.builder(Target.parse(engine.baseUri().toString(), null), "tinylm")
              .shape(new LoadShape.Closed(4))
              .duration(Duration.ofMinutes(5))
              .requests(0)
              .build();
      SyntheticPrompts lengths = new SyntheticPrompts(new Length(20, 0), new Length(40, 0), 1);
      PromptSource prompts =
          new PromptSource() {
            private int sent;

            @Override
            public Prompt next() {
              Prompt p = lengths.next();
              return sent++ < 3 ? p : new Prompt(p.text(), p.inputTokens(), 8_000);
            }

            @Override
            public String description() {
              return "three short prompts, then long ones";
            }
          };
      LoadRun run =
          LoadRun.start(
              config,
              prompts,
              null,
              new LoadRun.Listener() {
                @Override
                public void requestDone(RequestOutcome outcome, LoadRun.Progress progress) {
                  done.incrementAndGet();
                }
              });
      Await.until(() -> done.get() >= 3, "three requests to finish");
      run.stop(Duration.ZERO);
      result = run.await();
    }
    assertThat(result.stopped()).isTrue();
    ServingMetrics m = ServingMetrics.of(result);
    assertThat(m.completed()).isGreaterThanOrEqualTo(3);
    assertThat(m.completed() + m.failed() + m.cancelled()).isEqualTo(result.outcomes().size());
    assertThat(result.outcomes())
        .filteredOn(RequestOutcome::cancelled)
        .isNotEmpty()
        .allSatisfy(r -> assertThat(r.failure().label()).isEqualTo("cancelled"));
    // the duration runs to the last request that finished, not to the cancellations
    long lastFinished =
        result.outcomes().stream()
            .filter(r -> !r.cancelled())
            .mapToLong(RequestOutcome::endNanos)
            .max()
            .orElseThrow();
    assertThat(result.durationNanos()).isEqualTo(lastFinished - result.phaseStartNanos());
  }

  static double mean(double[] v) {
    double s = 0;
    for (double x : v) {
      s += x;
    }
    return s / v.length;
  }

  static double populationStd(double[] v) {
    double m = mean(v);
    double s = 0;
    for (double x : v) {
      s += (x - m) * (x - m);
    }
    return Math.sqrt(s / v.length);
  }

  /**
   * numpy.percentile's default (linear): rank p/100 * (n-1) between the neighbouring order
   * statistics.
   */
  static double numpyPercentile(double[] v, double p) {
    double[] s = v.clone();
    Arrays.sort(s);
    double rank = p / 100 * (s.length - 1);
    int below = (int) rank;
    return below + 1 < s.length
        ? s[below] * (1 - (rank - below)) + s[below + 1] * (rank - below)
        : s[below];
  }
}
