package dev.llmlat.agent.gateway.internal;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpan;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;

/**
 * The upstream side of gateways that call the engine with Apache HttpClient 5 (classic I/O; what
 * Spring's {@code HttpComponentsClientHttpRequestFactory} uses): once the engine's response head is
 * read, a streamed entity is wrapped so that the bytes the application reads from it are seen. This
 * runs in the calling thread, inside the agent's CLIENT span when it made one.
 */
public final class ApacheUpstream {
  private ApacheUpstream() {}

  public static void observe(ClassicHttpRequest request, ClassicHttpResponse response) {
    if (request == null
        || response == null
        || response.getCode() < 200
        || !"POST".equalsIgnoreCase(request.getMethod())) {
      return;
    }
    HttpEntity entity = response.getEntity();
    if (entity == null
        || entity instanceof ApacheUpstreamEntity
        || OpenAiEndpoint.forPath(path(request)) == null) {
      return;
    }
    Header traceparent = request.getFirstHeader("traceparent");
    String clientSpanId =
        traceparent == null ? null : UpstreamExchange.parentId(traceparent.getValue());
    Span current = Span.current();
    // the current span is the CLIENT span only when it is the one the engine was told about
    Span client =
        clientSpanId == null || clientSpanId.equals(current.getSpanContext().getSpanId())
            ? current
            : null;
    UpstreamExchange exchange =
        UpstreamExchange.forResponse(
            client,
            LocalRootSpan.current(),
            clientSpanId,
            entity.getContentType(),
            entity.getContentLength() < 0);
    if (exchange != null) {
      response.setEntity(new ApacheUpstreamEntity(entity, exchange));
    }
  }

  static String path(ClassicHttpRequest request) {
    String path = request.getPath(); // origin form, with the query
    int query = path == null ? -1 : path.indexOf('?');
    return query < 0 ? path : path.substring(0, query);
  }
}
