package dev.llmlat.store.http;

import dev.llmlat.store.internal.NativeResult;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes answers as ClickHouse's HTTP interface does: results with {@code X-ClickHouse-Query-Id},
 * {@code -Format}, {@code -Timezone}, {@code -Summary} and the format's Content-Type (compressed
 * when asked); errors with the status ClickHouse gives their code, {@code
 * X-ClickHouse-Exception-Code} and the text {@code Code: N. DB::Exception: ... (NAME)}.
 */
final class Answers {
  static final String DISPLAY_NAME = "llmlat-embedded";

  private final String timezone;
  private final AtomicLong queries = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();

  Answers(String timezone) {
    this.timezone = timezone;
  }

  long queries() {
    return queries.get();
  }

  long errors() {
    return errors.get();
  }

  /** A refusal; {@code q} may be null when the request was refused before it was read. */
  void error(HttpExchange exchange, QueryRequest q, ClickHouseError error) throws IOException {
    errors.incrementAndGet();
    HttpResponse response = exchange.response();
    if (response.committed()) {
      failMidway(exchange, error);
      return;
    }
    response.header("Content-Type", "text/plain; charset=UTF-8");
    response.header("X-ClickHouse-Server-Display-Name", DISPLAY_NAME);
    if (q != null) {
      response.header("X-ClickHouse-Query-Id", q.queryId());
      response.header("X-ClickHouse-Format", q.format());
    }
    response.header("X-ClickHouse-Timezone", timezone);
    response.header("X-ClickHouse-Exception-Code", Integer.toString(error.code()));
    int status = error.httpStatus();
    if (status == 401) {
      response.header("WWW-Authenticate", "Basic realm=\"ClickHouse\", charset=\"UTF-8\"");
    }
    response.send(status, (error.text() + "\n").getBytes(StandardCharsets.UTF_8));
  }

  /**
   * A failure after the answer began: the connection closes, so the client sees the answer cut off.
   */
  void failMidway(HttpExchange exchange, ClickHouseError error) {
    errors.incrementAndGet();
    exchange.response().closeAfter();
  }

  /** A whole result (one or more chunks of one result, already complete). */
  void result(
      HttpExchange exchange,
      QueryRequest q,
      NativeResult.Stats stats,
      List<NativeResult> chunks,
      OutputFormat.ChunkHeader header)
      throws IOException {
    queries.incrementAndGet();
    HttpResponse response = exchange.response();
    successHeaders(response, q, stats);
    if (q.httpEncoding() == null && !q.compress()) {
      long length = 0;
      for (int i = 0; i < chunks.size(); i++) {
        length +=
            chunks.get(i).length() - (i == 0 ? 0 : QueryRunner.headerLength(chunks.get(i), header));
      }
      OutputStream out = response.fixed(200, length);
      for (int i = 0; i < chunks.size(); i++) {
        QueryRunner.writeChunk(out, chunks.get(i), header, i == 0);
      }
      out.flush();
      return;
    }
    try (OutputStream out = Codecs.encode(response.stream(200), q.httpEncoding(), q.compress())) {
      for (int i = 0; i < chunks.size(); i++) {
        QueryRunner.writeChunk(out, chunks.get(i), header, i == 0);
      }
    }
    response.finish();
  }

  /** Starts a result sent as it is computed. */
  Streamed startStream(HttpExchange exchange, QueryRequest q, NativeResult.Stats soFar)
      throws IOException {
    queries.incrementAndGet();
    HttpResponse response = exchange.response();
    successHeaders(response, q, soFar);
    return new Streamed(
        this, exchange, Codecs.encode(response.stream(200), q.httpEncoding(), q.compress()));
  }

  /** A result on its way. */
  static final class Streamed {
    private final Answers answers;
    private final HttpExchange exchange;
    private final OutputStream out;
    private boolean first = true;

    Streamed(Answers answers, HttpExchange exchange, OutputStream out) {
      this.answers = answers;
      this.exchange = exchange;
      this.out = out;
    }

    /**
     * A failure midway: the error text ends the body (as ClickHouse writes it) and the body is cut
     * off without its last chunk, so no client takes it for a complete result.
     */
    void fail(ClickHouseError error) {
      answers.failMidway(exchange, error);
      try {
        out.write(("\n" + error.text() + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
      } catch (IOException ignored) {
        // the client is gone already
      }
    }

    void write(NativeResult chunk, OutputFormat.ChunkHeader header) throws IOException {
      QueryRunner.writeChunk(out, chunk, header, first);
      first = false;
      out.flush(); // the client reads rows as they come
    }

    void finish() throws IOException {
      out.close();
      exchange.response().finish();
    }
  }

  private void successHeaders(HttpResponse response, QueryRequest q, NativeResult.Stats stats) {
    response.header("Content-Type", new OutputFormat(q.format()).contentType());
    response.header("X-ClickHouse-Server-Display-Name", DISPLAY_NAME);
    response.header("X-ClickHouse-Query-Id", q.queryId());
    response.header("X-ClickHouse-Format", q.format());
    response.header("X-ClickHouse-Timezone", timezone);
    response.header("X-ClickHouse-Summary", summary(stats));
    if (q.httpEncoding() != null) {
      response.header("Content-Encoding", q.httpEncoding());
    }
  }

  /** ClickHouse's X-ClickHouse-Summary: every value a string. */
  static String summary(NativeResult.Stats s) {
    return "{\"read_rows\":\""
        + s.readRows()
        + "\",\"read_bytes\":\""
        + s.readBytes()
        + "\",\"written_rows\":\""
        + s.writtenRows()
        + "\",\"written_bytes\":\""
        + s.writtenBytes()
        + "\",\"total_rows_to_read\":\""
        + s.readRows()
        + "\",\"result_rows\":\""
        + s.resultRows()
        + "\",\"result_bytes\":\""
        + s.resultBytes()
        + "\",\"elapsed_ns\":\""
        + (long) (s.elapsedSeconds() * 1e9)
        + "\"}";
  }
}
