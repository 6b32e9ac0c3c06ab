package dev.llmlat.agent.gateway.internal;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpan;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * Wraps the {@code BodyHandler} of an OpenAI-style call made with the JDK {@code HttpClient}: a
 * streamed response's body subscriber is wrapped to see its bytes as the client receives them
 * ({@link JdkUpstreamBodySubscriber}). The call's CLIENT span is taken when the call starts, where
 * the agent's {@code java-http-client} instrumentation has made it current.
 */
public final class JdkUpstreamBodyHandler<T> implements HttpResponse.BodyHandler<T> {
  private final HttpResponse.BodyHandler<T> delegate;
  private final Span client;
  private final Span root;

  private JdkUpstreamBodyHandler(HttpResponse.BodyHandler<T> delegate, Span client, Span root) {
    this.delegate = delegate;
    this.client = client;
    this.root = root;
  }

  /** {@code handler} itself unless the request is an OpenAI-style POST made inside a trace. */
  public static <T> HttpResponse.BodyHandler<T> observe(
      HttpRequest request, HttpResponse.BodyHandler<T> handler) {
    if (handler == null
        || handler instanceof JdkUpstreamBodyHandler
        || !"POST".equalsIgnoreCase(request.method())
        || OpenAiEndpoint.forPath(request.uri().getPath()) == null) {
      return handler;
    }
    Context current = Context.current();
    Span client = Span.fromContext(current);
    Span root = LocalRootSpan.fromContextOrNull(current);
    if (!client.getSpanContext().isValid() && root == null) {
      return handler;
    }
    return new JdkUpstreamBodyHandler<>(handler, client, root);
  }

  @Override
  public HttpResponse.BodySubscriber<T> apply(HttpResponse.ResponseInfo info) {
    HttpResponse.BodySubscriber<T> subscriber = delegate.apply(info);
    UpstreamExchange exchange =
        UpstreamExchange.forResponse(
            client,
            root,
            null,
            info.headers().firstValue("content-type").orElse(null),
            info.headers().firstValue("content-length").isEmpty());
    return exchange == null || subscriber == null
        ? subscriber
        : new JdkUpstreamBodySubscriber<>(subscriber, exchange);
  }
}
