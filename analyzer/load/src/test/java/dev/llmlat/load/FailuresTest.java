package dev.llmlat.load;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.llmlat.load.SyntheticPrompts.Length;
import dev.llmlat.otlpkafka.SpanBatch;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Servers that misbehave in each way a load run meets, as real HTTP servers: every failure is
 * counted by kind and still becomes a span, with status ERROR and {@code error.type}.
 */
class FailuresTest {
  private final CountDownLatch release = new CountDownLatch(1);
  private HttpServer server;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext(
        "/busy/v1/chat/completions",
        e ->
            answer(
                e,
                503,
                "application/json",
                "{\"error\":{\"message\":\"the engine is overloaded\",\"type\":\"server_error\"}}"));
    server.createContext(
        "/stall/v1/chat/completions",
        e -> {
          e.getResponseHeaders().set("Content-Type", "text/event-stream");
          e.sendResponseHeaders(200, 0);
          OutputStream out = e.getResponseBody();
          out.write(
              "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n"
                  .getBytes(StandardCharsets.UTF_8));
          out.flush();
          try {
            release.await(
                30, TimeUnit.SECONDS); // then nothing more: the client's timeout has to end it
          } catch (InterruptedException ignored) {
            Thread.currentThread().interrupt();
          }
          e.close();
        });
    server.createContext(
        "/broken/v1/chat/completions",
        e ->
            answer(
                e,
                200,
                "text/event-stream",
                "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\ndata: {\"error\":{\"message\":\"CUDA out of memory\"}}\n\ndata: [DONE]\n\n"));
    server.createContext(
        "/empty/v1/chat/completions",
        e ->
            answer(
                e,
                200,
                "text/event-stream",
                ": keep-alive\n\ndata: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\ndata: [DONE]\n\n"));
    server.start();
  }

  @AfterEach
  void stop() {
    release.countDown();
    server.stop(0);
  }

  private static void answer(HttpExchange e, int status, String type, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    e.getResponseHeaders().set("Content-Type", type);
    e.sendResponseHeaders(status, bytes.length);
    e.getResponseBody().write(bytes);
    e.close();
  }

  /** Runs 3 requests against {@code url}; returns the result and the spans shipped. */
  private static Run run(String url, Duration timeout) throws Exception {
    List<SpanBatch> batches = Collections.synchronizedList(new ArrayList<>());
    SpanShipper shipper = new SpanShipper(batches::add);
    LoadConfig config =
        LoadConfig.builder(Target.parse(url, null), "m")
            .shape(new LoadShape.Constant(50))
            .requests(3)
            .timeout(timeout)
            .build();
    LoadResult result =
        LoadRun.start(
                config,
                new SyntheticPrompts(new Length(5, 0), new Length(4, 0), 1),
                shipper,
                LoadRun.Listener.NONE)
            .await();
    shipper.close();
    List<Span> spans = batches.stream().flatMap(b -> b.spans().stream()).toList();
    return new Run(result, ServingMetrics.of(result), spans);
  }

  record Run(LoadResult result, ServingMetrics metrics, List<Span> spans) {}

  private String url(String path) {
    return "http://127.0.0.1:" + server.getAddress().getPort() + path;
  }

  private static String attr(Span s, String key) {
    for (KeyValue kv : s.getAttributesList()) {
      if (kv.getKey().equals(key)) {
        return kv.getValue().hasStringValue()
            ? kv.getValue().getStringValue()
            : Long.toString(kv.getValue().getIntValue());
      }
    }
    return null;
  }

  private static void assertErrorSpans(Run run, String errorType, String message) {
    assertThat(run.spans())
        .hasSize(3)
        .allSatisfy(
            s -> {
              assertThat(s.getStatus().getCode()).isEqualTo(Status.StatusCode.STATUS_CODE_ERROR);
              assertThat(s.getStatus().getMessage()).contains(message);
              assertThat(attr(s, "error.type")).isEqualTo(errorType);
            });
    assertThat(run.metrics().completed()).isZero();
    assertThat(run.metrics().failed()).isEqualTo(3);
  }

  @Test
  void nothingListening() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Run run = run("http://127.0.0.1:" + port, Duration.ofSeconds(5));
    assertErrorSpans(run, "connection_refused", "cannot connect to 127.0.0.1:" + port);
    assertThat(run.metrics().errors())
        .containsExactly(java.util.Map.entry("connection refused", 3L));
    assertThat(run.spans()).allSatisfy(s -> assertThat(s.getEventsList()).isEmpty());
  }

  @Test
  void anHttpErrorStatusIsCountedByStatusWithTheServersMessage() throws Exception {
    Run run = run(url("/busy"), Duration.ofSeconds(5));
    assertErrorSpans(run, "503", "HTTP 503: the engine is overloaded");
    assertThat(run.metrics().errors()).containsExactly(java.util.Map.entry("HTTP 503", 3L));
    assertThat(run.spans())
        .allSatisfy(s -> assertThat(attr(s, "http.response.status_code")).isEqualTo("503"));
  }

  @Test
  void aStreamThatStallsEndsAtTheTimeoutWithWhatItHadReceived() throws Exception {
    Run run = run(url("/stall"), Duration.ofMillis(700));
    assertErrorSpans(run, "timeout", "did not end within 700 ms");
    assertThat(run.spans())
        .allSatisfy(
            s -> {
              assertThat(attr(s, "llmlat.client.chunks")).isEqualTo("1");
              assertThat(s.getEventsList())
                  .extracting(Span.Event::getName)
                  .containsExactly("llmlat.client.response_headers", "llmlat.client.first_chunk");
            });
  }

  @Test
  void anErrorInTheStreamAndAStreamWithoutContentAreFailures() throws Exception {
    assertErrorSpans(
        run(url("/broken"), Duration.ofSeconds(5)), "stream_error", "CUDA out of memory");
    Run empty = run(url("/empty"), Duration.ofSeconds(5));
    assertErrorSpans(empty, "no_content", "without a content chunk");
    // a role-only delta is no content: no first-chunk event
    assertThat(empty.spans())
        .allSatisfy(
            s ->
                assertThat(s.getEventsList())
                    .extracting(Span.Event::getName)
                    .containsExactly("llmlat.client.response_headers"));
  }
}
