package dev.llmlat.store.http.wire;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Reads HTTP/1.1 requests off one client connection and hands each to the handler, keeping the connection alive between them. */
public final class HttpConnectionHandler implements Runnable {
  /** What answers requests. */
  public interface Handler {
    void handle(HttpExchange exchange) throws IOException;
  }

  private static final int MAX_HEADERS = 200;
  private static final int MAX_REQUEST_LINE = 1 << 20; // ClickHouse's http_max_uri_size: query parameters may be long
  private static final int MAX_HEADER_LINE = 128 * 1024; // ClickHouse's http_max_field_value_size
  private static final int MAX_HEADER_BYTES = 1 << 20; // all the headers together
  private static final long DRAIN_LIMIT = 1 << 20; // an unread body up to this is skipped to keep the connection
  private static final long LINGER_NANOS = 2_000_000_000L; // after an error, how long to swallow what the client still sends

  private final Socket socket;
  private final Handler handler;
  private final HttpTimeouts timeouts;

  public HttpConnectionHandler(Socket socket, Handler handler) {
    this(socket, handler, HttpTimeouts.DEFAULTS);
  }

  public HttpConnectionHandler(Socket socket, Handler handler, HttpTimeouts timeouts) {
    this.socket = socket;
    this.handler = handler;
    this.timeouts = timeouts;
  }

  @Override
  public void run() {
    try (socket) {
      socket.setTcpNoDelay(true);
      ConnectionInput input = new ConnectionInput(socket, timeouts);
      ConnectionOutput out = new ConnectionOutput(socket.getOutputStream());
      try {
        while (input.awaitRequest()) {
          if (!serveOne(input, out)) {
            return;
          }
          out.release();
        }
      } catch (HttpProtocolException e) {
        refuse(out, e);
      }
    } catch (IOException | RuntimeException e) {
      // the client went away or broke the protocol; nothing more to answer on this connection
    }
  }

  /** Serves one request; false when the connection must close afterwards. */
  private boolean serveOne(ConnectionInput input, ConnectionOutput out) throws IOException {
    input.beginHead();
    String requestLine = input.readLine(MAX_REQUEST_LINE, "the request line");
    if (requestLine == null) {
      return false;
    }
    if (requestLine.isEmpty()) {
      input.endHead();
      return true; // stray CRLF between requests is allowed
    }
    String[] parts = requestLine.split(" ");
    if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
      throw new HttpProtocolException("malformed request line");
    }
    Map<String, List<String>> headers = new LinkedHashMap<>();
    String line;
    int count = 0;
    long bytes = 0;
    while ((line = input.readLine(MAX_HEADER_LINE, "a header")) != null && !line.isEmpty()) {
      bytes += line.length();
      if (++count > MAX_HEADERS || bytes > MAX_HEADER_BYTES) {
        throw new HttpProtocolException("too many or too long headers");
      }
      int colon = line.indexOf(':');
      // RFC 9112 §5.1: no whitespace before the colon, no folded lines; "Content-Length : 5"
      // is exactly what a proxy and this server might read differently
      if (colon <= 0 || isSpace(line.charAt(0)) || isSpace(line.charAt(colon - 1))) {
        throw new HttpProtocolException("malformed header");
      }
      String name = line.substring(0, colon).toLowerCase(Locale.ROOT);
      // header values are bytes; clients send UTF-8 in X-ClickHouse-* values
      String value = new String(line.substring(colon + 1).strip().getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
      headers.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    }
    if (line == null) {
      return false;
    }
    input.endHead();
    String method = parts[0];
    String target = parts[1];
    boolean http10 = parts[2].equals("HTTP/1.0");
    String connection = first(headers, "connection");
    boolean keepAlive = http10 ? "keep-alive".equalsIgnoreCase(connection) : !"close".equalsIgnoreCase(connection);

    RequestFraming framing = RequestFraming.of(headers, http10);
    boolean chunked = framing.chunked();
    long length = framing.length();
    BodyInputStream body = new BodyInputStream(input, length, chunked);
    boolean expectContinue = "100-continue".equalsIgnoreCase(first(headers, "expect"));
    InputStream bodyForHandler = expectContinue ? new ContinueOnRead(body, out) : body;

    int q = target.indexOf('?');
    String path = q < 0 ? target : target.substring(0, q);
    String rawQuery = q < 0 ? null : target.substring(q + 1);
    HttpRequest request = new HttpRequest(method, path, rawQuery, headers, bodyForHandler, socket.getInetAddress());
    // an answer given before the body was read: the rest of the body stands between this answer
    // and the next request, and is skipped only when it is known to be small
    HttpResponse response = new HttpResponse(out, method.equals("HEAD"), keepAlive, keepAliveSeconds(), () -> !body.finished()
        && (chunked || length > DRAIN_LIMIT || expectContinue && !((ContinueOnRead) bodyForHandler).sent()));
    HttpExchange exchange = new HttpExchange(request, response, input, body);
    try {
      handler.handle(exchange);
    } catch (IOException | RuntimeException e) {
      // a body that broke its framing or timed out fails the handler (never an engine reading a
      // truncated INSERT); a decoder on top may have wrapped the error, the body still knows it
      HttpProtocolException why = e instanceof HttpProtocolException p ? p : body.failure();
      if (why != null && !response.committed()) {
        throw why;
      }
      if (e instanceof HttpProtocolException) {
        throw new IOException(e); // answered already: only close
      }
      throw e;
    } finally {
      out.flush();
    }
    if (!response.committed()) {
      return false;
    }
    if (!body.finished()) {
      if (expectContinue && !((ContinueOnRead) bodyForHandler).sent()) {
        return false; // the client may still send the body it held back: never read it as a request
      }
      if (chunked || length > DRAIN_LIMIT) {
        return false;
      }
      try {
        body.drain();
      } catch (HttpProtocolException e) {
        return false; // answered already: just close
      }
    }
    return response.keepAlive();
  }

  private int keepAliveSeconds() {
    return (int) Math.max(1, timeouts.keepAlive().toSeconds());
  }

  private static boolean isSpace(char c) {
    return c == ' ' || c == '\t';
  }

  private static String first(Map<String, List<String>> headers, String name) {
    List<String> values = headers.get(name);
    return values == null || values.isEmpty() ? null : values.get(0);
  }

  /**
   * Answers a broken or too slow request with its status and a short reason, then closes. What
   * the client still sends is read and dropped for a moment first: closing with unread input
   * would reset the connection and could destroy the answer before the client reads it.
   */
  private void refuse(ConnectionOutput out, HttpProtocolException e) throws IOException {
    byte[] body = (HttpResponse.reason(e.status()) + ": " + e.getMessage() + "\n").getBytes(StandardCharsets.UTF_8);
    out.write(("HTTP/1.1 " + e.status() + " " + HttpResponse.reason(e.status())
        + "\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: " + body.length
        + "\r\nConnection: Close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
    out.write(body);
    out.flush();
    out.release();
    socket.shutdownOutput();
    InputStream in = socket.getInputStream();
    byte[] sink = new byte[512];
    long until = System.nanoTime() + LINGER_NANOS;
    long left;
    while ((left = (until - System.nanoTime()) / 1_000_000) > 0) {
      socket.setSoTimeout((int) left);
      if (in.read(sink) < 0) {
        return;
      }
    }
  }

  /** Sends "100 Continue" when the handler first reads the body (Expect: 100-continue). */
  private static final class ContinueOnRead extends InputStream {
    private final BodyInputStream body;
    private final OutputStream out;
    private boolean sent;

    ContinueOnRead(BodyInputStream body, OutputStream out) {
      this.body = body;
      this.out = out;
    }

    private void go() throws IOException {
      if (!sent) {
        sent = true;
        out.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
      }
    }

    boolean sent() {
      return sent;
    }

    @Override
    public int read() throws IOException {
      go();
      return body.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      go();
      return body.read(b, off, len);
    }
  }
}
