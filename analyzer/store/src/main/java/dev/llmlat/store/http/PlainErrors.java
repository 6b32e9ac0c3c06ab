package dev.llmlat.store.http;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * The answers Jetty gives requests it refuses before they reach the store (broken framing,
 * oversized heads) and those whose body broke: a line of plain text, {@code Bad Request: why},
 * never an HTML page, and the connection closed.
 */
final class PlainErrors extends ErrorHandler {
  @Override
  protected void generateResponse(
      Request request,
      Response response,
      int code,
      String message,
      Throwable cause,
      Callback callback) {
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=UTF-8");
    response.getHeaders().put(HttpHeader.CONNECTION, "close");
    response.write(true, ByteBuffer.wrap(text(code, message)), callback);
  }

  private static byte[] text(int code, String message) {
    String reason = HttpStatus.getMessage(code);
    String why =
        message == null || message.isBlank() || message.equals(reason) ? "" : ": " + message;
    return (reason + why + "\n").getBytes(StandardCharsets.UTF_8);
  }
}
