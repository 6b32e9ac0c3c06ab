package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gatewayapp.ReactorNettyGatewayMain;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A gateway's backpressure against the truth: the Reactor Netty gateway under the agent relays a
 * fast stream of large SSE events (16 MB) to a client on a raw socket with a 16 KB receive buffer,
 * which reads the response's head and first 1 MB, stops reading for a pause it times itself, then
 * reads the rest. During the pause the client's receive buffer and the gateway's socket send buffer
 * fill (the latter at most {@code net.ipv4.tcp_wmem}'s maximum, 4 MB here: checked to be well under
 * the 15 MB still to come), and the gateway's channel turns unwritable until the client reads
 * again: the SERVER span's longest {@code llmlat.gateway.backpressure} event is that interval,
 * within 15 % of the pause (it starts once the buffers are full and ends once the client has
 * drained enough of them), and spans the moment the client resumed. The same stream read promptly
 * (the default receive buffer, reading at once) holds the gateway up never: a count of 0 and no
 * event.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BackpressureIT {
  private static final int EVENTS = 1000;
  private static final int CONTENT_BYTES = 16 * 1024;
  private static final int SMALL_RECEIVE_BUFFER = 16 * 1024;
  private static final int READ_BEFORE_PAUSE = 1024 * 1024;

  /**
   * Long enough that the gateway's filling its send buffer (up to 4 MB before it blocks: 40 to 200
   * ms at the relay rates of a loaded two-core machine) is a small part of it.
   */
  private static final long PAUSE_MILLIS = 2500;

  private static final double RELATIVE_SLACK = 0.15;
  private static final byte[] DONE = "data: [DONE]".getBytes(StandardCharsets.US_ASCII);

  private TestBroker broker;
  private FakeEngine engine;
  private GatewayProcess gateway;

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    long sendBufferMax = sendBufferMax();
    assertThat((long) EVENTS * CONTENT_BYTES - READ_BEFORE_PAUSE)
        .as(
            "the stream after the pause begins outlasts the most a socket's send buffer holds (tcp_wmem)")
        .isGreaterThan(2 * sendBufferMax);
    engine = FakeEngine.withLargeEvents(EVENTS, CONTENT_BYTES);
    gateway = startGateway(broker, engine);
    for (int i = 0; i < 3; i++) { // warm-up: the relay path's first runs are interpreted
      read(hex(16), 0, 0, 0);
    }
  }

  /** The cause on every event: the socket, as this gateway's channel writes to nothing else. */
  String expectedCause() {
    return LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE_SOCKET;
  }

  /** The gateway under test, relaying to {@code engine}: Reactor Netty (channel writability). */
  GatewayProcess startGateway(TestBroker broker, FakeEngine engine) throws Exception {
    return GatewayProcess.start(
        GatewayProcess.java17OrCurrent(),
        ReactorNettyGatewayMain.class,
        GatewayProcess.extensionWithKafka(
            broker.bootstrapServers(),
            "-Dotel.instrumentation.netty.enabled=true",
            "-Dotel.instrumentation.reactor.enabled=true",
            "-Dotel.instrumentation.reactor-netty.enabled=true"),
        engine.baseUrl());
  }

  /**
   * The largest send buffer TCP autotuning gives a socket (Linux), 4 MB where that is not known.
   */
  private static long sendBufferMax() throws IOException {
    Path wmem = Path.of("/proc/sys/net/ipv4/tcp_wmem");
    if (!Files.isReadable(wmem)) {
      return 4L << 20;
    }
    String[] minDefaultMax = Pattern.compile("\\s+").split(Files.readString(wmem).trim());
    return Long.parseLong(minDefaultMax[minDefaultMax.length - 1]);
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
  void aClientThatStopsReadingHoldsTheGatewayUpForItsPause() throws Exception {
    String traceId = hex(16);
    Read read = read(traceId, SMALL_RECEIVE_BUFFER, READ_BEFORE_PAUSE, PAUSE_MILLIS);
    Span server = serverSpan(traceId);
    List<Span.Event> events = backpressure(server);
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(server.getAttributesList());
    System.out.printf(
        "%s: client paused %.1f ms; gateway backpressure events (start after the pause began, ms:"
            + " duration): %s%n",
        gateway.name(),
        read.pauseNanos() / 1e6,
        events.stream()
            .map(
                e ->
                    String.format(
                        "%.1f: %.1f",
                        (e.getTimeUnixNano() - read.pausedEpochNanos()) / 1e6, duration(e) / 1e6))
            .toList());
    assertThat(read.completeStream()).as("the client read the whole stream").isTrue();
    assertThat(attrs.get("llmlat.gateway.chunks").getIntValue()).isEqualTo(EVENTS);
    assertThat(events).as("backpressure events on the SERVER span").isNotEmpty();
    assertThat(attrs)
        .containsKeys(
            LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT,
            LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS);
    long count = attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT).getIntValue();
    long total = attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS).getIntValue();
    assertThat(count).isGreaterThanOrEqualTo(events.size());
    if (count == events.size()) {
      assertThat(total).isEqualTo(events.stream().mapToLong(BackpressureIT::duration).sum());
    }

    checkLongestIsThePause(events, total, read.pauseNanos(), read.resumedEpochNanos());
    assertThat(events)
        .as("what was full (HTTP/1.1: only the socket holds writes back)")
        .extracting(BackpressureIT::cause)
        .allMatch(cause -> java.util.Objects.equals(cause, expectedCause()));
  }

  /**
   * The longest of {@code events} is the client's pause of {@code pauseNanos}, within {@link
   * #RELATIVE_SLACK}, and spans the moment it resumed ({@code resumedEpochNanos}: the same host
   * clock); the span's {@code total} holds it. Returns it.
   */
  static Span.Event checkLongestIsThePause(
      List<Span.Event> events, long total, long pauseNanos, long resumedEpochNanos) {
    Span.Event longest =
        events.stream().max(Comparator.comparingLong(BackpressureIT::duration)).orElseThrow();
    long slack = (long) (RELATIVE_SLACK * pauseNanos);
    assertThat(duration(longest))
        .as("the longest backpressure, ns (the client's pause: %d ns)", pauseNanos)
        .isBetween(pauseNanos - slack, pauseNanos + slack);
    assertThat(longest.getTimeUnixNano())
        .as("began before the client resumed")
        .isLessThan(resumedEpochNanos);
    assertThat(longest.getTimeUnixNano() + duration(longest))
        .as("ended after the client resumed")
        .isGreaterThanOrEqualTo(resumedEpochNanos);
    assertThat(total).isGreaterThanOrEqualTo(duration(longest));
    return longest;
  }

  @Test
  void aClientThatReadsPromptlyHoldsTheGatewayUpNever() throws Exception {
    String traceId = hex(16);
    Read read = read(traceId, 0, 0, 0);
    System.out.printf(
        "%s: a prompt client read %d bytes in %.1f ms%n",
        gateway.name(), read.bytes(), read.readNanos() / 1e6);
    Span server = serverSpan(traceId);
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(server.getAttributesList());

    assertThat(read.completeStream()).as("the client read the whole stream").isTrue();
    assertThat(attrs.get("llmlat.gateway.chunks").getIntValue()).isEqualTo(EVENTS);
    assertThat(attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT))
        .as("backpressure observed")
        .isNotNull();
    long allowance = promptReaderAllowanceNanos();
    if (allowance == 0) {
      assertThat(attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT).getIntValue()).isZero();
      assertThat(attrs).doesNotContainKey(LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS);
      assertThat(backpressure(server)).isEmpty();
    } else {
      long total =
          attrs.containsKey(LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS)
              ? attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS).getIntValue()
              : 0;
      assertThat(total)
          .as("all the prompt reader held the gateway up, ns (events: %s)", backpressure(server))
          .isLessThan(allowance);
    }
  }

  /**
   * How long, in all, a prompt reader may be seen holding the gateway up: 0 (never) where the
   * gateway sees the client's buffers fill (a channel turning unwritable past its high-water mark).
   */
  long promptReaderAllowanceNanos() {
    return 0;
  }

  /**
   * What the client saw: whether the stream ended with its last event; its pause (0 when none): how
   * long, and when it began and ended (epoch ns); the body's bytes and how long reading them took.
   */
  private record Read(
      boolean completeStream,
      long pauseNanos,
      long pausedEpochNanos,
      long resumedEpochNanos,
      long bytes,
      long readNanos) {}

  /**
   * One streamed chat through the gateway on a raw socket, in trace {@code traceId}: with a receive
   * buffer of {@code receiveBuffer} bytes (0: the system's), the response's head and {@code
   * beforePause} bytes of its body read, then no read for {@code pauseMillis} (0: none), then the
   * rest until the gateway closes the connection.
   */
  private Read read(String traceId, int receiveBuffer, int beforePause, long pauseMillis)
      throws IOException {
    byte[] body = GatewayClient.chatBody(true, EVENTS).getBytes(StandardCharsets.UTF_8);
    URI gw = URI.create(gateway.baseUrl());
    try (Socket socket = new Socket()) {
      if (receiveBuffer > 0) {
        socket.setReceiveBufferSize(receiveBuffer); // before the connect: the window it advertises
      }
      socket.setSoTimeout((int) TimeUnit.SECONDS.toMillis(60));
      socket.connect(new InetSocketAddress(gw.getHost(), gw.getPort()), 5000);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /v1/chat/completions HTTP/1.1\r\n"
                  + "Host: "
                  + gw.getHost()
                  + ":"
                  + gw.getPort()
                  + "\r\n"
                  + "Content-Type: application/json\r\n"
                  + "Content-Length: "
                  + body.length
                  + "\r\n"
                  + "traceparent: 00-"
                  + traceId
                  + "-"
                  + hex(8)
                  + "-01\r\n"
                  + "Connection: close\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();

      InputStream in = socket.getInputStream();
      String head = head(in);
      assertThat(head).as("gateway log:\n%s", gateway.log()).startsWith("HTTP/1.1 200");
      long begin = System.nanoTime();
      byte[] buffer = new byte[8192];
      long bodyBytes = 0;
      byte[] tail = new byte[0];
      long pauseNanos = 0;
      long pausedEpochNanos = 0;
      long resumedEpochNanos = 0;
      boolean paused = pauseMillis <= 0;
      while (true) {
        if (!paused && bodyBytes >= beforePause) {
          long stopped = System.nanoTime();
          pausedEpochNanos = FakeEngine.epochNanos();
          sleep(pauseMillis);
          resumedEpochNanos = FakeEngine.epochNanos();
          pauseNanos = System.nanoTime() - stopped;
          paused = true;
        }
        int n =
            in.read(
                buffer,
                0,
                paused ? buffer.length : (int) Math.min(buffer.length, beforePause - bodyBytes));
        if (n < 0) {
          break;
        }
        bodyBytes += n;
        tail = lastBytes(tail, buffer, n, 256);
      }
      boolean complete = indexOf(tail, DONE) >= 0;
      return new Read(
          complete,
          pauseNanos,
          pausedEpochNanos,
          resumedEpochNanos,
          bodyBytes,
          System.nanoTime() - begin);
    }
  }

  /** The response's head, through its blank line. */
  private static String head(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    byte[] end = {'\r', '\n', '\r', '\n'};
    while (matched < end.length) {
      int b = in.read();
      if (b < 0) {
        throw new AssertionError(
            "the gateway closed the connection in the response's head: " + head);
      }
      head.write(b);
      matched = b == end[matched] ? matched + 1 : (b == end[0] ? 1 : 0);
    }
    return head.toString(StandardCharsets.US_ASCII);
  }

  /** The last {@code keep} bytes of {@code tail} followed by {@code read}'s first {@code n}. */
  static byte[] lastBytes(byte[] tail, byte[] read, int n, int keep) {
    byte[] joined = new byte[Math.min(keep, tail.length + n)];
    int fromRead = Math.min(n, joined.length);
    int fromTail = joined.length - fromRead;
    System.arraycopy(tail, tail.length - fromTail, joined, 0, fromTail);
    System.arraycopy(read, n - fromRead, joined, fromTail, fromRead);
    return joined;
  }

  /** Where {@code needle} first occurs in {@code haystack}; -1 if it does not. */
  static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  /** The trace's SERVER span, once exported. */
  private Span serverSpan(String traceId) {
    return serverSpan(broker, gateway, traceId);
  }

  /** The SERVER span of {@code gateway}'s trace {@code traceId}, once exported: exactly one. */
  static Span serverSpan(TestBroker broker, GatewayProcess gateway, String traceId) {
    List<SpanTopic.Record> records;
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      records =
          topic.trace(
              traceId,
              spans -> spans.stream().anyMatch(BackpressureIT::isServer),
              Duration.ofSeconds(30));
    }
    List<Span> servers =
        records.stream().flatMap(r -> r.spans().stream()).filter(BackpressureIT::isServer).toList();
    assertThat(servers)
        .as("SERVER spans of trace %s; gateway log:\n%s", traceId, gateway.log())
        .hasSize(1);
    return servers.get(0);
  }

  static boolean isServer(Span span) {
    return span.getKind() == Span.SpanKind.SPAN_KIND_SERVER;
  }

  static List<Span.Event> backpressure(Span server) {
    return server.getEventsList().stream()
        .filter(e -> e.getName().equals(LlmlatAttributes.EVENT_GATEWAY_BACKPRESSURE))
        .toList();
  }

  static long duration(Span.Event event) {
    return event.getAttributesList().stream()
        .filter(kv -> kv.getKey().equals(LlmlatAttributes.GATEWAY_BACKPRESSURE_DURATION_NS))
        .map(KeyValue::getValue)
        .mapToLong(AnyValue::getIntValue)
        .findFirst()
        .orElseThrow(
            () -> new AssertionError("a backpressure event without its duration: " + event));
  }

  /** The event's cause attribute; null when absent. */
  static String cause(Span.Event event) {
    return event.getAttributesList().stream()
        .filter(kv -> kv.getKey().equals(LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE))
        .map(kv -> kv.getValue().getStringValue())
        .findFirst()
        .orElse(null);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted in the client's pause", e);
    }
  }

  static String hex(int bytes) {
    byte[] id = new byte[bytes];
    ThreadLocalRandom.current().nextBytes(id);
    id[0] |= 1; // never all zero
    return HexFormat.of().formatHex(id);
  }
}
