package dev.llmlat.agent.gateway.internal;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Where a Jakarta Servlet container (Tomcat 10+, Undertow 2.2+, Jetty 11) hands a request to the
 * application's first filter or servlet: an OpenAI-style POST inside a SERVER span continues with
 * observing wrappers of the request and the response, as a filter of the application would wrap
 * them. Other requests pass untouched.
 */
public final class ServletGateway {
  /** Marks a request as already seen (later filters, the servlet, async and error dispatches). */
  static final String SEEN = "dev.llmlat.gateway.seen";

  private ServletGateway() {}

  /**
   * The wrapped request (its {@link ObservedServletRequest#observedResponse()} the wrapped
   * response), or null.
   */
  public static ObservedServletRequest observe(ServletRequest request, ServletResponse response) {
    if (!(request instanceof HttpServletRequest) || !(response instanceof HttpServletResponse)) {
      return null;
    }
    HttpServletRequest http = (HttpServletRequest) request;
    if (!"POST".equalsIgnoreCase(http.getMethod())) {
      return null;
    }
    OpenAiEndpoint endpoint = OpenAiEndpoint.forPath(http.getRequestURI());
    if (endpoint == null || request.getAttribute(SEEN) != null) {
      return null;
    }
    request.setAttribute(SEEN, Boolean.TRUE);
    if (request.getClass().getName().startsWith("org.eclipse.jetty.ee")) {
      return null; // Jetty 12: observed below the servlet layer (JettyGatewayStream)
    }
    GatewayExchange exchange = GatewayExchange.inCurrentSpan(endpoint, http::getHeader);
    if (!exchange.hasSpan()) {
      return null;
    }
    exchange.backpressureObserved(); // the wrappers time the container's writes
    return new ObservedServletRequest(
        http, new ObservedServletResponse((HttpServletResponse) response, exchange), exchange);
  }

  /**
   * The first filter or servlet returned: unless the response goes on asynchronously, the container
   * now sends what the application wrote without flushing (its own flush and close are not seen
   * through the wrappers).
   */
  public static void serviceReturned(ObservedServletRequest request) {
    if (!request.isAsyncStarted()) {
      request.observedResponse().containerSends();
    }
  }
}
