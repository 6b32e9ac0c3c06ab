package dev.llmlat.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.attribution.Attribution;
import dev.llmlat.demo.DemoTraces;
import dev.llmlat.live.internal.LiveMetrics;
import dev.llmlat.live.internal.LiveTopology;
import dev.llmlat.live.internal.TraceAssembler;
import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The live topology tells its listener (the metrics recorder in {@code llmlat attribute --live}) of
 * each request once, after its row is written, and not again when a late span re-attributes it.
 */
class AttributedListenerTest {
  static final String TOPIC = "otlp_spans";
  static final Duration GRACE = Duration.ofSeconds(2);
  static final Duration TICK = Duration.ofMillis(400);

  @TempDir Path dir;
  EmbeddedClickHouse store;
  TopologyTestDriver driver;
  TestInputTopic<byte[], byte[]> input;
  final List<Attribution> told = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() {
    store = EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate());
    SchemaMigrator.bundled().migrate(store);
    TraceAssembler.Settings settings =
        new TraceAssembler.Settings(
            GRACE, Duration.ofMinutes(1), 1, TICK, 64, LiveAttributor.VERSION);
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, "live-listener-test");
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    p.put(StreamsConfig.STATE_DIR_CONFIG, dir.resolve("state").toString());
    driver =
        new TopologyTestDriver(
            LiveTopology.build(TOPIC, settings, store, new LiveMetrics(), told::add),
            p,
            Instant.ofEpochMilli(1_000_000));
    input = driver.createInputTopic(TOPIC, new ByteArraySerializer(), new ByteArraySerializer());
  }

  @AfterEach
  void stop() {
    driver.close();
    store.close();
  }

  @Test
  void eachRequestIsToldOnceWithTheRowsTtftAndNotAgainForALateSpan() {
    List<DemoTraces.Request> requests = new ArrayList<>();
    ExportTraceServiceRequest spans =
        new DemoTraces(11, 1_795_946_700_000_000_000L).generate(5, requests);
    // the gateway's spans come late: the first attribution is the engine's, the late one replaces
    // its row
    send(spans.toBuilder().removeResourceSpans(0).build());
    advance(GRACE.plus(TICK));
    assertThat(told).hasSize(5);
    Map<String, Long> rows =
        store.query("SELECT TraceId, TtftNs FROM llm_request_attribution FINAL").rows().stream()
            .collect(Collectors.toMap(r -> r.get(0), r -> Long.parseLong(r.get(1))));
    assertThat(told.stream().collect(Collectors.toMap(Attribution::traceId, Attribution::ttftNs)))
        .isEqualTo(rows);

    send(
        ExportTraceServiceRequest.newBuilder().addResourceSpans(spans.getResourceSpans(0)).build());
    advance(GRACE.plus(TICK));
    assertThat(
            store
                .query("SELECT DISTINCT TtftStartLayer FROM llm_request_attribution FINAL")
                .single())
        .isEqualTo("gateway");
    assertThat(told).as("a re-attribution is not told again").hasSize(5);
  }

  /**
   * Lets wall-clock time pass as it does, a punctuation at a time (a task that read nothing for a
   * grace of them is idle).
   */
  void advance(Duration d) {
    for (Duration left = d; !left.isZero(); ) {
      Duration step = left.compareTo(TICK) < 0 ? left : TICK;
      driver.advanceWallClockTime(step);
      left = left.minus(step);
    }
  }

  private void send(ExportTraceServiceRequest request) {
    SpanBatch batch = SpanBatch.of(request);
    for (int i = 0; i < batch.recordCount(); i++) {
      input.pipeInput(batch.traceId(i).getBytes(StandardCharsets.UTF_8), batch.record(i));
    }
  }
}
