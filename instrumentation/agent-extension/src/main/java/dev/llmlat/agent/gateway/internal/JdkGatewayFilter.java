package dev.llmlat.agent.gateway.internal;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;

/**
 * Added to every context of a JDK {@code HttpServer}: for OpenAI-style requests it wraps the
 * exchange's streams so the application reads and writes exactly the bytes it would have, while
 * {@link GatewayExchange} observes them.
 */
public final class JdkGatewayFilter extends Filter {
  public static final JdkGatewayFilter INSTANCE = new JdkGatewayFilter();

  private JdkGatewayFilter() {}

  /** Appends the filter once: after the agent's own filter, so it runs inside the SERVER span. */
  public static void install(HttpContext context) {
    if (context != null && !context.getFilters().contains(INSTANCE)) {
      context.getFilters().add(INSTANCE);
    }
  }

  @Override
  public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
    OpenAiEndpoint endpoint = OpenAiEndpoint.forPath(exchange.getRequestURI().getPath());
    if (endpoint == null || !"POST".equalsIgnoreCase(exchange.getRequestMethod())) {
      chain.doFilter(exchange);
      return;
    }
    GatewayExchange observed =
        new GatewayExchange(endpoint, exchange.getRequestHeaders()::getFirst);
    exchange.setStreams(
        new JdkObservedRequestBody(exchange.getRequestBody(), observed),
        new JdkObservedResponseBody(exchange.getResponseBody(), exchange, observed));
    chain.doFilter(exchange);
  }

  @Override
  public String description() {
    return "llmlat: gen_ai attributes and first streamed chunk";
  }
}
