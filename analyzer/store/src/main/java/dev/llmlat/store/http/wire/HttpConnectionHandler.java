package dev.llmlat.store.http.wire;

import java.io.BufferedOutputStream;
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
  private static final int IDLE_TIMEOUT_MILLIS = 10_000; // Keep-Alive: timeout=10, as ClickHouse's default
  private static final long DRAIN_LIMIT = 1 << 20; // an unread body up to this is skipped to keep the connection

  private final Socket socket;
  private final Handler handler;

  public HttpConnectionHandler(Socket socket, Handler handler) {
    this.socket = socket;
    this.handler = handler;
  }

  @Override
  public void run() {
    try (socket) {
      socket.setTcpNoDelay(true);
      ConnectionInput input = new ConnectionInput(socket, IDLE_TIMEOUT_MILLIS);
      OutputStream out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
      while (input.awaitRequest()) {
        if (!serveOne(input, out)) {
          return;
        }
      }
    } catch (IOException | RuntimeException e) {
      // the client went away or broke the protocol; nothing more to answer on this connection
    }
  }

  /** Serves one request; false when the connection must close afterwards. */
  private boolean serveOne(ConnectionInput input, OutputStream out) throws IOException {
    String requestLine = input.readLine();
    if (requestLine == null) {
      return false;
    }
    if (requestLine.isEmpty()) {
      return true; // stray CRLF between requests is allowed
    }
    String[] parts = requestLine.split(" ");
    if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
      badRequest(out, "malformed request line");
      return false;
    }
    Map<String, List<String>> headers = new LinkedHashMap<>();
    String line;
    int count = 0;
    while ((line = input.readLine()) != null && !line.isEmpty()) {
      int colon = line.indexOf(':');
      if (colon <= 0 || ++count > MAX_HEADERS) {
        badRequest(out, "malformed or too many headers");
        return false;
      }
      String name = line.substring(0, colon).strip().toLowerCase(Locale.ROOT);
      // header values are bytes; clients send UTF-8 in X-ClickHouse-* values
      String value = new String(line.substring(colon + 1).strip().getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
      headers.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    }
    if (line == null) {
      return false;
    }
    String method = parts[0];
    String target = parts[1];
    boolean http10 = parts[2].equals("HTTP/1.0");
    String connection = first(headers, "connection");
    boolean keepAlive = http10 ? "keep-alive".equalsIgnoreCase(connection) : !"close".equalsIgnoreCase(connection);

    boolean chunked = first(headers, "transfer-encoding") != null
        && first(headers, "transfer-encoding").toLowerCase(Locale.ROOT).contains("chunked");
    long length = 0;
    if (!chunked && first(headers, "content-length") != null) {
      try {
        length = Long.parseLong(first(headers, "content-length").strip());
      } catch (NumberFormatException e) {
        badRequest(out, "bad Content-Length");
        return false;
      }
    }
    BodyInputStream body = new BodyInputStream(input, length, chunked);
    boolean expectContinue = "100-continue".equalsIgnoreCase(first(headers, "expect"));
    InputStream bodyForHandler = expectContinue ? new ContinueOnRead(body, out) : body;

    int q = target.indexOf('?');
    String path = q < 0 ? target : target.substring(0, q);
    String rawQuery = q < 0 ? null : target.substring(q + 1);
    HttpRequest request = new HttpRequest(method, path, rawQuery, headers, bodyForHandler, socket.getInetAddress());
    long declared = length;
    // an answer given before the body was read: the rest of the body stands between this answer
    // and the next request, and is skipped only when it is known to be small
    HttpResponse response = new HttpResponse(out, method.equals("HEAD"), keepAlive, () -> !body.finished()
        && (chunked || declared > DRAIN_LIMIT || expectContinue && !((ContinueOnRead) bodyForHandler).sent()));
    HttpExchange exchange = new HttpExchange(request, response, input, body);
    try {
      handler.handle(exchange);
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
      body.drain();
    }
    return response.keepAlive();
  }

  private static String first(Map<String, List<String>> headers, String name) {
    List<String> values = headers.get(name);
    return values == null || values.isEmpty() ? null : values.get(0);
  }

  private static void badRequest(OutputStream out, String why) throws IOException {
    byte[] body = ("Bad request: " + why + "\n").getBytes(StandardCharsets.UTF_8);
    out.write(("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: " + body.length
        + "\r\nConnection: Close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
    out.write(body);
    out.flush();
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
