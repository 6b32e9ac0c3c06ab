package dev.llmlat.agent.gateway.internal;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpan;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.io.Content;

/**
 * The upstream side of gateways that call the engine with Jetty 12's {@code HttpClient} (Spring's
 * {@code JettyClientHttpRequestFactory}: Spring Cloud Gateway Server MVC on Jetty): the call's
 * context is kept on the request when it is sent, inside the agent's CLIENT span, and the
 * response's content source is observed as the client's listeners read it.
 */
public final class JettyUpstream {
  /** The request attribute holding the context of the call (its CLIENT span current). */
  static final String CONTEXT = "dev.llmlat.upstream.context";

  private JettyUpstream() {}

  /**
   * As an OpenAI-style POST is sent: keeps the current context (the agent's CLIENT span) on it, and
   * starts the record of its connection ({@link JettyConnection}).
   */
  public static void onSend(Request request) {
    if (request != null
        && "POST".equalsIgnoreCase(request.getMethod())
        && OpenAiEndpoint.forPath(request.getPath()) != null
        && Span.current().getSpanContext().isValid()) {
      request.attribute(CONTEXT, Context.current());
      JettyConnection.onSend(request);
    }
  }

  /** {@code source} itself unless it is a streamed response to a request {@link #onSend} kept. */
  public static Content.Source observe(Response response, Content.Source source) {
    if (source == null || source instanceof JettyUpstreamContentSource || response == null) {
      return source;
    }
    Object kept = response.getRequest().getAttributes().get(CONTEXT);
    if (!(kept instanceof Context)) {
      return source;
    }
    Context context = (Context) kept;
    UpstreamExchange exchange =
        UpstreamExchange.forResponse(
            Span.fromContext(context),
            LocalRootSpan.fromContextOrNull(context),
            null,
            response.getHeaders().get("Content-Type"),
            response.getHeaders().get("Content-Length") == null);
    return exchange == null ? source : new JettyUpstreamContentSource(source, exchange);
  }
}
