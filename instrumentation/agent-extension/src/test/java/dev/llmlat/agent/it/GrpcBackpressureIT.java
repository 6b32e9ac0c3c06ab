package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gatewayapp.GrpcGatewayMain;
import dev.llmlat.semconv.LlmlatAttributes;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A gRPC gateway's backpressure against the truth: the gateway under the agent ({@link
 * GrpcGatewayMain}, grpc-java on Netty) relays a fast stream of large SSE events (16 KB each, 2 ms
 * apart) as one message per event to a grpc-java client whose HTTP/2 window is 16 KB and which
 * takes messages only as it asks for them: it asks for them one by one, stops asking after the
 * first for a pause it times itself, then asks for the rest. While it does not ask, it returns no
 * bytes to the gateway's window, the gateway's messages queue in its transport, and the call turns
 * not ready once 32 KiB wait there: the SERVER span's longest {@code llmlat.gateway.backpressure}
 * event is that spell, within 15 % of the pause, spanning the moment the client resumed. The same
 * stream taken at once by a client whose window holds it all holds the gateway up at most briefly.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GrpcBackpressureIT {
  private static final int EVENTS = 300;
  private static final int CONTENT_BYTES = 16 * 1024;
  private static final int SMALL_WINDOW = 16 * 1024;
  private static final int LARGE_WINDOW = 8 * 1024 * 1024;
  private static final long PAUSE_MILLIS = 2500;

  /**
   * Between the engine's events: 8 MB/s, a fast token stream's rate many times over, yet one a
   * client that takes each message at once keeps up with. Back to back (a flood of 16 KB messages),
   * the gateway's sends outrun even such a client's reads and the call is not ready for most of the
   * stream: that is backpressure too, but not what this test asks about.
   */
  private static final long GAP_MILLIS = 2;

  /** As for servlets: a moment a prompt client is off the CPU may hold the transport up. */
  private static final long PROMPT_CLIENT_ALLOWANCE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private TestBroker broker;
  private FakeEngine engine;
  private GatewayProcess gateway;

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    engine = FakeEngine.withLargeEvents(EVENTS, CONTENT_BYTES, GAP_MILLIS);
    gateway =
        GatewayProcess.start(
            GatewayProcess.java17OrCurrent(),
            GrpcGatewayMain.class,
            GatewayProcess.extensionWithKafka(
                broker.bootstrapServers(), "-Dotel.instrumentation.grpc.enabled=true"),
            List.of(engine.baseUrl()));
    for (int i = 0; i < 3; i++) { // warm-up: the relay path's first runs are interpreted
      generate(BackpressureIT.hex(16), LARGE_WINDOW, 0);
    }
  }

  @AfterAll
  void stop() throws Exception {
    if (gateway != null) {
      gateway.close();
    }
    if (engine != null) {
      engine.close();
    }
  }

  @Test
  void aClientThatTakesNoMessagesHoldsTheCallUpForItsPause() throws Exception {
    String traceId = BackpressureIT.hex(16);
    Generated generated = generate(traceId, SMALL_WINDOW, PAUSE_MILLIS);
    Span server = serverSpan(traceId);
    List<Span.Event> events = BackpressureIT.backpressure(server);
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(server.getAttributesList());
    System.out.printf(
        "gRPC: client paused %.1f ms; gateway backpressure events (start after the pause began,"
            + " ms: duration): %s; count %s%n",
        generated.pauseNanos() / 1e6,
        events.stream()
            .map(
                e ->
                    String.format(
                        "%.1f: %.1f",
                        (e.getTimeUnixNano() - generated.pausedEpochNanos()) / 1e6,
                        BackpressureIT.duration(e) / 1e6))
            .toList(),
        attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT));
    assertThat(generated.status().isOk()).as("gateway log:\n%s", gateway.log()).isTrue();
    assertThat(generated.messages()).as("one message per event").isEqualTo(EVENTS);
    assertThat(attrs.get(LlmlatAttributes.GATEWAY_CHUNKS).getIntValue()).isEqualTo(EVENTS);
    assertThat(server.getEventsList())
        .as("the agent's message events, off by the extension's default: none")
        .noneMatch(e -> e.getName().equals("message"));
    assertThat(events).as("backpressure events on the SERVER span").isNotEmpty();
    long count = attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT).getIntValue();
    long total = attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS).getIntValue();
    assertThat(count).isGreaterThanOrEqualTo(events.size());
    Span.Event longest =
        BackpressureIT.checkLongestIsThePause(
            events, total, generated.pauseNanos(), generated.resumedEpochNanos());
    assertThat(BackpressureIT.cause(longest)).as("gRPC does not say what was full").isNull();
  }

  @Test
  void aClientThatTakesEveryMessageAtOnceHoldsTheCallUpAtMostBriefly() throws Exception {
    String traceId = BackpressureIT.hex(16);
    long before = FakeEngine.epochNanos();
    Generated generated = generate(traceId, LARGE_WINDOW, 0);
    Span server = serverSpan(traceId);
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(server.getAttributesList());
    System.out.printf(
        "gRPC: SERVER span %s, attributes %s, events %s; a prompt client read %d messages in"
            + " %.1f ms; backpressure (ms): %s%n",
        server.getName(),
        attrs.keySet(),
        server.getEventsList().stream().map(Span.Event::getName).toList(),
        generated.messages(),
        generated.readNanos() / 1e6,
        BackpressureIT.backpressure(server).stream()
            .map(e -> String.format("%.1f", BackpressureIT.duration(e) / 1e6))
            .toList());

    assertThat(generated.status().isOk()).as("gateway log:\n%s", gateway.log()).isTrue();
    assertThat(server.getName()).isEqualTo("llmlat.test.Gateway/Generate");
    assertThat(attrs.get(LlmlatAttributes.GATEWAY_CHUNKS).getIntValue()).isEqualTo(EVENTS);
    long firstChunk = attrs.get(LlmlatAttributes.GATEWAY_FIRST_CHUNK_NS).getIntValue();
    assertThat(firstChunk)
        .as("the first message left after the call began and before the client had it")
        .isBetween(before, generated.firstMessageEpochNanos());
    assertThat(server.getEventsList())
        .extracting(Span.Event::getName)
        .contains(LlmlatAttributes.EVENT_FIRST_CHUNK, LlmlatAttributes.EVENT_UPSTREAM_FIRST_CHUNK);
    assertThat(attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT))
        .as("backpressure observed")
        .isNotNull();
    long total =
        attrs.containsKey(LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS)
            ? attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS).getIntValue()
            : 0;
    assertThat(total)
        .as("all the prompt client held the gateway up, ns")
        .isLessThan(PROMPT_CLIENT_ALLOWANCE_NANOS);
  }

  /**
   * What the client saw: the call's status, the messages and how long the call took, when the first
   * arrived (epoch ns), and its pause (0 when none): how long, when it began and ended (epoch ns).
   */
  private record Generated(
      Status status,
      int messages,
      long readNanos,
      long firstMessageEpochNanos,
      long pauseNanos,
      long pausedEpochNanos,
      long resumedEpochNanos) {}

  /**
   * One streamed generation through the gateway in trace {@code traceId}, over a channel whose
   * HTTP/2 windows are {@code window} bytes: messages taken one by one as they come, with a pause
   * of {@code pauseMillis} (0: none) after the first.
   */
  private Generated generate(String traceId, int window, long pauseMillis) throws Exception {
    URI gw = URI.create(gateway.baseUrl());
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(gw.getHost(), gw.getPort())
            .usePlaintext()
            .initialFlowControlWindow(
                window) // fixed: flowControlWindow would let BDP pings grow it
            .build();
    try {
      ClientCall<byte[], byte[]> call =
          channel.newCall(
              GrpcGatewayMain.GENERATE,
              CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS));
      CompletableFuture<Generated> done = new CompletableFuture<>();
      long started = System.nanoTime();
      Metadata headers = new Metadata();
      headers.put(
          Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER),
          "00-" + traceId + "-" + BackpressureIT.hex(8) + "-01");
      call.start(
          new ClientCall.Listener<>() {
            private int messages;
            private long first;
            private long paused;
            private long resumed;
            private long pauseNanos;

            @Override
            public void onMessage(byte[] message) {
              messages++;
              if (messages == 1) {
                first = FakeEngine.epochNanos();
                if (pauseMillis > 0) {
                  paused = FakeEngine.epochNanos();
                  long pausedAt = System.nanoTime();
                  Thread resume =
                      new Thread(
                          () -> {
                            sleep(pauseMillis);
                            pauseNanos = System.nanoTime() - pausedAt;
                            resumed = FakeEngine.epochNanos();
                            call.request(Integer.MAX_VALUE);
                          });
                  resume.setDaemon(true);
                  resume.start();
                  return;
                }
              }
              call.request(1);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              done.complete(
                  new Generated(
                      status,
                      messages,
                      System.nanoTime() - started,
                      first,
                      pauseNanos,
                      paused,
                      resumed));
            }
          },
          headers);
      call.sendMessage(GatewayClient.chatBody(true, EVENTS).getBytes(StandardCharsets.UTF_8));
      call.halfClose();
      call.request(1);
      return done.get(90, TimeUnit.SECONDS);
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private Span serverSpan(String traceId) {
    return BackpressureIT.serverSpan(broker, gateway, traceId);
  }
}
