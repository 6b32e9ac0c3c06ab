package dev.llmlat.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.load.SyntheticPrompts.Length;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Servers that answer in ways no OpenAI-compatible server should, as raw sockets (the JDK's HTTP
 * server would not send what they send): whatever comes back, every request ends counted, with its
 * kind, and memory stays bounded.
 */
class HostileServersTest {
  private static final String SSE_HEADERS =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";

  private ServerSocket server;
  private Thread acceptor;

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.close();
      acceptor.join(10_000);
    }
  }

  /** Serves every connection with {@code answer}, after reading the request. */
  private String serve(Consumer<OutputStream> answer) throws IOException {
    server = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
    acceptor =
        Thread.ofPlatform()
            .daemon()
            .start(
                () -> {
                  while (!server.isClosed()) {
                    try {
                      Socket s = server.accept();
                      Thread.ofVirtual()
                          .start(
                              () -> {
                                try (s) {
                                  readRequest(s.getInputStream());
                                  answer.accept(s.getOutputStream());
                                } catch (IOException | RuntimeException e) {
                                  // the client went away (it stops reading a hostile stream): that
                                  // is the point
                                }
                              });
                    } catch (IOException e) {
                      return; // closed
                    }
                  }
                });
    return "http://127.0.0.1:" + server.getLocalPort();
  }

  /**
   * Reads the request whole: a socket closed with unread input is reset, and the client might lose
   * the answer.
   */
  private static void readRequest(InputStream in) throws IOException {
    StringBuilder headers = new StringBuilder();
    int b;
    while (!headers.toString().endsWith("\r\n\r\n") && (b = in.read()) >= 0) {
      headers.append((char) b);
    }
    for (String line : headers.toString().split("\r\n")) {
      if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        in.readNBytes(Integer.parseInt(line.substring(15).strip()));
      }
    }
  }

  private static void write(OutputStream out, String text) {
    try {
      out.write(text.getBytes(StandardCharsets.UTF_8));
      out.flush();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static LoadConfig.Builder config(String url) {
    return LoadConfig.builder(Target.parse(url, null), "m")
        .shape(new LoadShape.Constant(50))
        .requests(3)
        .timeout(Duration.ofSeconds(20));
  }

  private static LoadResult run(LoadConfig config) throws InterruptedException {
    return LoadRun.start(
            config,
            new SyntheticPrompts(new Length(5, 0), new Length(4, 0), 1),
            null,
            LoadRun.Listener.NONE)
        .await();
  }

  @Test
  void aRequestThatFailsInAnUnexpectedWayCountsAsAnInternalFailureWithoutAStackTrace()
      throws Exception {
    // the JDK's client throws IllegalArgumentException (not IOException) at a Content-Length that
    // is no number
    String url =
        serve(
            out ->
                write(
                    out,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: abc\r\n\r\n"));
    PrintStream stderr = System.err;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    LoadResult result;
    System.setErr(new PrintStream(printed, true, StandardCharsets.UTF_8));
    try {
      result = run(config(url).build());
    } finally {
      System.setErr(stderr);
    }
    ServingMetrics m = ServingMetrics.of(result);
    assertThat(m.completed()).isZero();
    assertThat(m.failed()).isEqualTo(3);
    assertThat(m.errors()).containsExactly(Map.entry("internal", 3L));
    assertThat(result.failures(Failure.Kind.INTERNAL))
        .hasSize(3)
        .allSatisfy(
            f -> {
              assertThat(f.errorType()).isEqualTo("internal");
              assertThat(f.toString())
                  .startsWith("internal: IllegalArgumentException")
                  .contains("abc");
            });
    assertThat(printed.toString(StandardCharsets.UTF_8)).doesNotContain("Exception");
  }

  @Test
  void aLineWithoutANewlineFailsAsLineTooLongAfterTheLimitNotAfterTheLine() throws Exception {
    int body = 64 << 20;
    String url =
        serve(
            out -> {
              write(out, SSE_HEADERS + "data: ");
              byte[] chunk = new byte[64 << 10];
              Arrays.fill(chunk, (byte) 'a');
              try {
                for (int sent = 0; sent < body; sent += chunk.length) {
                  out.write(chunk);
                }
              } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
    LoadConfig config = config(url).maxLineBytes(1 << 20).build();
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    RequestOutcome outcome;
    long allocated;
    // on this (platform) thread, so what reading the stream allocates can be counted: the old
    // reader
    // allocated well over the 64 MiB line (the line, then its copies); a bounded one about its
    // limit
    try (StreamingClient client = new StreamingClient(config)) {
      StreamingClient.Call call =
          new StreamingClient.Call(
              0,
              new Prompt("hi", 1, 4),
              "0af7651916cd43dd8448eb211c80319c",
              "b7ad6b7169203331",
              true,
              System.nanoTime());
      long before = threads.getCurrentThreadAllocatedBytes();
      outcome = client.execute(call, new StreamingClient.InFlight(Thread.currentThread()));
      allocated = threads.getCurrentThreadAllocatedBytes() - before;
    }
    assertThat(allocated)
        .as("bytes allocated reading a 64 MiB line with a 1 MiB limit")
        .isLessThan(16L << 20);
    assertThat(outcome.failure()).isNotNull();
    assertThat(outcome.failure().kind()).isEqualTo(Failure.Kind.BAD_STREAM);
    assertThat(outcome.failure().toString())
        .isEqualTo("bad stream: line too long (over 1 MiB without a line break)");
  }

  @Test
  void anEventOfManyDataLinesIsBoundedToo() throws Exception {
    String line = "data: " + "x".repeat(600) + "\n";
    String url = serve(out -> write(out, SSE_HEADERS + line + line + line + "\n"));
    LoadResult result = run(config(url).maxLineBytes(1024).build());
    assertThat(ServingMetrics.of(result).errors()).containsExactly(Map.entry("bad stream", 3L));
    assertThat(result.outcomes())
        .allSatisfy(
            r ->
                assertThat(r.failure().detail())
                    .isEqualTo("event too long (its data lines add up to over 1 KiB)"));
  }

  @Test
  void eventsEndAtCrLfCrOrLfAsTheSseGrammarHasIt() throws Exception {
    String chunk = "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}";
    String usage = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}";
    String url =
        serve(
            out ->
                write(
                    out,
                    SSE_HEADERS
                        + "\uFEFF: comment\r\n"
                        + chunk
                        + "\r\n\r\n"
                        + chunk
                        + "\r\r"
                        + chunk
                        + "\n\n"
                        + usage
                        + "\n\ndata: [DONE]"));
    LoadResult result = run(config(url).build());
    assertThat(result.outcomes())
        .hasSize(3)
        .allSatisfy(
            r -> {
              assertThat(r.failure()).isNull();
              assertThat(r.chunks()).isEqualTo(3);
              assertThat(r.usagePromptTokens()).isEqualTo(7);
            });
  }
}
