package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The checks of how a gateway's HTTP client got its upstream connections, on the exported spans:
 * several streamed requests at once through a pool of one connection (each waits for the stream
 * before it: the pool wait, against the engine's own log), and a first and a second call (a new
 * connection with its connect and TLS handshake, then the pooled one).
 */
final class ConnectionChecks {
  static final long MIN_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
  static final double RELATIVE_SLACK = 0.15;
  private static final Set<String> CONNECTION_EVENTS =
      Set.of(
          LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START,
          LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED,
          LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START,
          LlmlatAttributes.EVENT_UPSTREAM_CONNECTED,
          LlmlatAttributes.EVENT_UPSTREAM_TLS_START,
          LlmlatAttributes.EVENT_UPSTREAM_TLS_DONE,
          LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN,
          LlmlatAttributes.EVENT_UPSTREAM_BODY_WRITTEN);

  /** The span that carries the connection's events. */
  enum Carrier {
    /** The call's CLIENT span (the client makes it before it seeks the connection). */
    CLIENT,
    /** The gateway's SERVER span, each event naming the CLIENT span (Reactor Netty). */
    SERVER
  }

  /** One exported event of the connection, its time and attributes. */
  record Event(String name, long time, Map<String, AnyValue> attributes) {}

  /** One call: what the client saw, what the engine saw, the carrier span's connection events. */
  record Call(
      GatewayClient.Result result,
      FakeEngine.Received upstream,
      Span carrier,
      List<Event> events,
      String raw) {
    List<Event> named(String name) {
      return events.stream().filter(e -> e.name().equals(name)).toList();
    }

    Event one(String name) {
      List<Event> found = named(name);
      assertThat(found).as("%s events on the carrier span; all: %s", name, events).hasSize(1);
      return found.get(0);
    }

    long at(String name) {
      return one(name).time();
    }
  }

  private final TestBroker broker;
  private final FakeEngine engine;
  private final GatewayClient client = new GatewayClient();

  ConnectionChecks(TestBroker broker, FakeEngine engine) {
    this.broker = broker;
    this.engine = engine;
  }

  /**
   * Warm-up calls whose connections the engine closes (so the pool holds none), then {@code
   * concurrent} streamed calls at once through a gateway whose pool has one connection to the
   * engine: each call after the first waits for the stream before it. Checks each call's events and
   * returns the calls in the order the engine received them. The pool's figures on the acquire
   * start: its key and size, and the pending and leased counts.
   */
  List<Call> checkPoolOfOne(
      GatewayProcess gateway, int concurrent, Carrier carrier, String clientStack)
      throws Exception {
    return checkPoolOfOne(
        gateway,
        concurrent,
        carrier,
        clientStack,
        Set.of(LlmlatAttributes.UPSTREAM_POOL_PENDING, LlmlatAttributes.UPSTREAM_POOL_LEASED));
  }

  /**
   * As {@link #checkPoolOfOne(GatewayProcess, int, Carrier, String)}, the client giving only {@code
   * counts} of the two.
   */
  List<Call> checkPoolOfOne(
      GatewayProcess gateway,
      int concurrent,
      Carrier carrier,
      String clientStack,
      Set<String> counts)
      throws Exception {
    warmUp(gateway);
    List<Call> calls = concurrently(gateway, concurrent, carrier, clientStack);

    String pool = engine.baseUrl();
    for (int k = 0; k < calls.size(); k++) {
      Call call = calls.get(k);
      Map<String, AnyValue> start =
          call.one(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START).attributes();
      assertThat(start.get(LlmlatAttributes.UPSTREAM_POOL).getStringValue()).isEqualTo(pool);
      assertThat(start.get(LlmlatAttributes.UPSTREAM_POOL_MAX).getIntValue())
          .as("the pool's size")
          .isEqualTo(1);
      assertThat(start.keySet()).as("the pool's counts given").containsAll(counts);
      if (counts.contains(LlmlatAttributes.UPSTREAM_POOL_LEASED)) {
        assertThat(start.get(LlmlatAttributes.UPSTREAM_POOL_LEASED).getIntValue())
            .isBetween(0L, 1L);
      }
      if (counts.contains(LlmlatAttributes.UPSTREAM_POOL_PENDING)) {
        assertThat(start.get(LlmlatAttributes.UPSTREAM_POOL_PENDING).getIntValue())
            .isBetween(0L, concurrent - 1L);
      }
      assertThat(reused(call))
          .as("call %d's connection pooled (the first one's is new)", k + 1)
          .isEqualTo(k > 0);
      assertThat(call.upstream().remotePort())
          .as("call %d came over the pool's one connection (the engine's log)", k + 1)
          .isEqualTo(calls.get(0).upstream().remotePort());
      long acquired = call.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED);
      long headers = checkOrder(call);
      if (k == 0) {
        long connectStart = call.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START);
        assertThat(connectStart)
            .isLessThanOrEqualTo(call.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED));
        assertThat(call.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED)).isLessThanOrEqualTo(headers);
      } else {
        assertThat(call.named(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START))
            .as("no connect on a pooled connection")
            .isEmpty();
        // one connection: this request reached the engine only after the stream before it ended
        // there
        FakeEngine.Received before = calls.get(k - 1).upstream();
        assertThat(call.upstream().arrivalEpochNanos())
            .isGreaterThanOrEqualTo(before.lastWriteEpochNanos());
        // the truth, from the engine's log and the client's send time: the request waited from its
        // sending until the engine had finished the stream before it (the connection free again)
        long truth = before.lastWriteEpochNanos() - call.result().startEpochNanos();
        checkPoolWait(gateway, call, k, truth);
      }
    }
    return calls;
  }

  /**
   * A client that never waits for a connection (the JDK's: it bounds only the idle ones it keeps)
   * and keeps one idle connection: after warm-up calls whose connections the engine closes, {@code
   * concurrent} streamed calls at once each get a new connection at once (the engine's log: each on
   * a connection of its own, all received while the first stream was still being written), then two
   * at once share the one connection kept idle: one reuses it, the other connects anew.
   */
  void checkUnboundedPoolKeepingOne(
      GatewayProcess gateway, int concurrent, Carrier carrier, String clientStack)
      throws Exception {
    warmUp(gateway);
    List<Call> calls = concurrently(gateway, concurrent, carrier, clientStack);
    Set<Integer> ports = new java.util.HashSet<>();
    for (int k = 0; k < calls.size(); k++) {
      Call call = calls.get(k);
      Map<String, AnyValue> start =
          call.one(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START).attributes();
      assertThat(start.get(LlmlatAttributes.UPSTREAM_POOL).getStringValue())
          .isEqualTo(engine.baseUrl());
      assertThat(start.keySet())
          .as("no pool size nor counts: the client has none")
          .doesNotContain(
              LlmlatAttributes.UPSTREAM_POOL_MAX,
              LlmlatAttributes.UPSTREAM_POOL_PENDING,
              LlmlatAttributes.UPSTREAM_POOL_LEASED);
      assertThat(reused(call)).as("call %d's connection is new", k + 1).isFalse();
      assertThat(ports.add(call.upstream().remotePort()))
          .as("call %d on a connection of its own (the engine's log)", k + 1)
          .isTrue();
      assertThat(call.upstream().arrivalEpochNanos())
          .as("call %d reached the engine while the first stream went on", k + 1)
          .isLessThan(calls.get(0).upstream().lastWriteEpochNanos());
      checkNewConnection(call);
      // the truth: no call waited for a connection (each had its own while the others streamed)
      checkPoolWait(gateway, call, k, 0);
    }

    List<Call> pair = concurrently(gateway, 2, carrier, clientStack);
    List<Call> reusing = pair.stream().filter(ConnectionChecks::reused).toList();
    assertThat(reusing)
        .as("of two calls at once, one reuses the one idle connection kept")
        .hasSize(1);
    Call reuser = reusing.get(0);
    Call opener = pair.get(pair.get(0) == reuser ? 1 : 0);
    assertThat(ports)
        .as("the reused connection is one of those before (the engine's log)")
        .contains(reuser.upstream().remotePort());
    assertThat(ports)
        .as("the other call's connection is new (the engine's log)")
        .doesNotContain(opener.upstream().remotePort());
    assertThat(reuser.named(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START))
        .as("no connect on the pooled connection")
        .isEmpty();
    checkOrder(reuser);
    checkNewConnection(opener);
  }

  private static boolean reused(Call call) {
    return call.one(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED)
        .attributes()
        .get(LlmlatAttributes.UPSTREAM_CONNECTION_REUSED)
        .getBoolValue();
  }

  /**
   * Acquire start, acquired, headers written, body written, then the engine's answer; returns the
   * headers' time.
   */
  private static long checkOrder(Call call) {
    long acquired = call.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED);
    long headers = call.at(LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN);
    assertThat(call.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START))
        .isLessThanOrEqualTo(acquired);
    assertThat(acquired).isLessThanOrEqualTo(headers);
    assertThat(headers)
        .as("headers before body: %s", call.events())
        .isLessThanOrEqualTo(call.at(LlmlatAttributes.EVENT_UPSTREAM_BODY_WRITTEN));
    // same host clock: the gateway wrote the request before the engine answered it
    assertThat(headers).isLessThanOrEqualTo(call.upstream().firstWriteEpochNanos());
    assertThat(call.raw())
        .as("no prompt text in the exported records")
        .doesNotContain(GatewayClient.SECRET_PROMPT);
    return headers;
  }

  /** A connection made for the call after it was acquired: connected, then the request written. */
  private static void checkNewConnection(Call call) {
    long headers = checkOrder(call);
    assertThat(
            List.of(
                call.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED),
                call.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START),
                call.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED),
                headers))
        .as("acquired, connect, then the request written: %s", call.events())
        .isSorted();
  }

  private static void checkPoolWait(GatewayProcess gateway, Call call, int k, long truth) {
    long measured =
        call.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED)
            - call.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START);
    long slack = Math.max(MIN_SLACK_NANOS, (long) (RELATIVE_SLACK * truth));
    System.out.printf(
        "%s: call %d waited %.1f ms for the pool (engine's log: %.1f ms)%n",
        gateway.name(), k + 1, measured / 1e6, truth / 1e6);
    assertThat(measured)
        .as("call %d's pool wait, ns (truth %d ns)", k + 1, truth)
        .isBetween(truth - slack, truth + slack);
  }

  /**
   * Calls through a gateway whose pool the engine has emptied: three whose connections it closes.
   */
  private void warmUp(GatewayProcess gateway) throws Exception {
    engine.closeConnections(true);
    try {
      for (int i = 0; i < 3; i++) { // the relay path's first runs are interpreted
        assertThat(
                client
                    .post(
                        gateway.baseUrl(), "/v1/chat/completions", GatewayClient.chatBody(true, 8))
                    .status())
            .as("gateway log:\n%s", gateway.log())
            .isEqualTo(200);
        engine.take();
      }
    } finally {
      engine.closeConnections(false);
    }
    engine.clear();
  }

  /** {@code concurrent} streamed calls sent at once, in the order the engine received them. */
  private List<Call> concurrently(
      GatewayProcess gateway, int concurrent, Carrier carrier, String clientStack)
      throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<String> traceIds = new ArrayList<>();
    List<Future<GatewayClient.Result>> results = new ArrayList<>();
    List<Call> calls = new ArrayList<>();
    ExecutorService senders = Executors.newFixedThreadPool(concurrent);
    try {
      for (int i = 0; i < concurrent; i++) {
        String traceId = hex(16);
        traceIds.add(traceId);
        results.add(
            senders.submit(
                () -> {
                  go.await();
                  return client.post(
                      gateway.baseUrl(),
                      "/v1/chat/completions",
                      GatewayClient.chatBody(true, 64),
                      "00-" + traceId + "-" + hex(8) + "-01");
                }));
      }
      go.countDown();
      List<FakeEngine.Received> received = new ArrayList<>();
      for (int i = 0; i < concurrent; i++) {
        received.add(engine.take());
      }
      received.sort(Comparator.comparingLong(FakeEngine.Received::arrivalEpochNanos));
      for (FakeEngine.Received upstream : received) {
        int index = traceIds.indexOf(upstream.traceId());
        assertThat(index)
            .as("the engine's request %s is one of the test's traces %s", upstream, traceIds)
            .isNotNegative();
        GatewayClient.Result result = results.get(index).get(30, TimeUnit.SECONDS);
        assertThat(result.status()).as("gateway log:\n%s", gateway.log()).isEqualTo(200);
        calls.add(call(gateway, result, upstream, carrier, clientStack));
      }
    } finally {
      senders.shutdownNow();
    }
    return calls;
  }

  /** One streamed call, sequentially, and its connection's events. */
  Call exchange(GatewayProcess gateway, Carrier carrier, String clientStack) throws Exception {
    engine.clear();
    String traceId = hex(16);
    GatewayClient.Result result =
        client.post(
            gateway.baseUrl(),
            "/v1/chat/completions",
            GatewayClient.chatBody(true, 64),
            "00-" + traceId + "-" + hex(8) + "-01");
    assertThat(result.status()).as("gateway log:\n%s", gateway.log()).isEqualTo(200);
    FakeEngine.Received upstream = engine.take();
    assertThat(upstream.traceId()).isEqualTo(traceId);
    return call(gateway, result, upstream, carrier, clientStack);
  }

  /** The trace of one call, once the carrier span has the connection's acquired event. */
  private Call call(
      GatewayProcess gateway,
      GatewayClient.Result result,
      FakeEngine.Received upstream,
      Carrier carrier,
      String clientStack) {
    String traceId = upstream.traceId();
    List<SpanTopic.Record> records;
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      records =
          topic.trace(
              traceId,
              spans ->
                  spans.stream()
                      .anyMatch(
                          s ->
                              isCarrier(s, upstream, carrier)
                                  && s.getEventsList().stream()
                                      .anyMatch(
                                          e ->
                                              e.getName()
                                                  .equals(
                                                      LlmlatAttributes
                                                          .EVENT_UPSTREAM_HEADERS_WRITTEN))),
              Duration.ofSeconds(30));
    }
    List<Span> carriers =
        records.stream()
            .flatMap(r -> r.spans().stream())
            .filter(s -> isCarrier(s, upstream, carrier))
            .toList();
    assertThat(carriers)
        .as("the %s span of trace %s; gateway log:\n%s", carrier, traceId, gateway.log())
        .hasSize(1);
    Span span = carriers.get(0);
    assertThat(
            GatewayAgentIT.attributes(span.getAttributesList())
                .get(LlmlatAttributes.UPSTREAM_CLIENT)
                .getStringValue())
        .isEqualTo(clientStack);
    List<Event> events =
        span.getEventsList().stream()
            .filter(e -> CONNECTION_EVENTS.contains(e.getName()))
            .map(
                e ->
                    new Event(
                        e.getName(),
                        e.getTimeUnixNano(),
                        GatewayAgentIT.attributes(e.getAttributesList())))
            .toList();
    if (carrier == Carrier.SERVER) {
      assertThat(events)
          .as("each event names the CLIENT span the engine was told about")
          .allSatisfy(
              e ->
                  assertThat(e.attributes().get(LlmlatAttributes.UPSTREAM_SPAN_ID).getStringValue())
                      .isEqualTo(upstream.parentSpanId()));
    }
    String raw =
        records.stream()
            .map(r -> new String(r.value(), StandardCharsets.ISO_8859_1))
            .reduce("", String::concat);
    return new Call(result, upstream, span, events, raw);
  }

  private static boolean isCarrier(Span span, FakeEngine.Received upstream, Carrier carrier) {
    return carrier == Carrier.CLIENT
        ? SpanTopic.hex(span.getSpanId()).equals(upstream.parentSpanId())
        : span.getKind() == Span.SpanKind.SPAN_KIND_SERVER;
  }

  private static String hex(int bytes) {
    byte[] id = new byte[bytes];
    ThreadLocalRandom.current().nextBytes(id);
    id[0] |= 1;
    return HexFormat.of().formatHex(id);
  }
}
