package dev.llmlat.agent.gateway.internal;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.IOException;

/**
 * The request as the application sees it: its body, read as bytes or as characters, is observed.
 */
public final class ObservedServletRequest extends HttpServletRequestWrapper {
  private final ObservedServletResponse response;
  private final GatewayExchange exchange;
  private ServletInputStream in;
  private BufferedReader reader;

  ObservedServletRequest(
      HttpServletRequest request, ObservedServletResponse response, GatewayExchange exchange) {
    super(request);
    this.response = response;
    this.exchange = exchange;
  }

  public ObservedServletResponse observedResponse() {
    return response;
  }

  @Override
  public ServletInputStream getInputStream() throws IOException {
    if (in == null) {
      in = new ObservedServletInputStream(super.getInputStream(), exchange);
    }
    return in;
  }

  @Override
  public BufferedReader getReader() throws IOException {
    if (reader == null) {
      reader = new BufferedReader(new ObservedReader(super.getReader(), exchange));
    }
    return reader;
  }

  /**
   * Keeps the wrappers in the async context: a plain {@code startAsync()} would hand the
   * container's own request and response to whoever writes the stream later.
   */
  @Override
  public AsyncContext startAsync() {
    return super.startAsync(this, response);
  }
}
