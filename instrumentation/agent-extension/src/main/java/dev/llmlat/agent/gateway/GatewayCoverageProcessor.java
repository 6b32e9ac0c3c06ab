package dev.llmlat.agent.gateway;

import dev.llmlat.agent.gateway.internal.GatewayAttributes;
import dev.llmlat.agent.gateway.internal.OpenAiEndpoint;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.internal.ExtendedSpanProcessor;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Says when a gateway's server stack is one the llmlat hooks do not cover, instead of leaving its
 * spans silently without first-chunk data: as an OpenAI-style SERVER span (a POST to a {@code
 * /v1/chat/completions} or {@code /v1/completions} path) ends without the {@code
 * gen_ai.operation.name} every hook sets as it starts, it gets {@code
 * llmlat.gateway.first_chunk=unsupported} and {@code llmlat.gateway.server}, and the first such
 * span of each server stack logs one warning.
 */
public final class GatewayCoverageProcessor implements ExtendedSpanProcessor {
  private static final Logger logger = Logger.getLogger(GatewayCoverageProcessor.class.getName());
  private static final AttributeKey<String> OPERATION =
      AttributeKey.stringKey("gen_ai.operation.name");
  private static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
  private static final AttributeKey<String> PATH = AttributeKey.stringKey("url.path");
  private static final AttributeKey<String> FIRST_CHUNK =
      AttributeKey.stringKey(GatewayAttributes.FIRST_CHUNK);
  private static final AttributeKey<String> SERVER =
      AttributeKey.stringKey(GatewayAttributes.SERVER);

  /** Server stacks already warned about (a handful per process at most). */
  private final Set<String> warned = ConcurrentHashMap.newKeySet();

  @Override
  public void onEnding(ReadWriteSpan span) {
    if (span.getKind() != SpanKind.SERVER || span.getAttribute(OPERATION) != null) {
      return;
    }
    SpanContext parent = span.getParentSpanContext();
    if (parent.isValid() && !parent.isRemote()) {
      return; // not the gateway's own request span
    }
    if (!"POST".equals(span.getAttribute(METHOD))
        || OpenAiEndpoint.forPath(span.getAttribute(PATH)) == null) {
      return;
    }
    String server = span.getInstrumentationScopeInfo().getName();
    span.setAttribute(FIRST_CHUNK, GatewayAttributes.FIRST_CHUNK_UNSUPPORTED);
    span.setAttribute(SERVER, server);
    if (warned.add(server)) {
      logger.log(
          Level.WARNING,
          "llmlat: the gateway's server stack ("
              + server
              + ") is not one llmlat observes:"
              + " its OpenAI-style SERVER spans get no first-chunk time, chunk count nor gen_ai.* request attributes;"
              + " they are marked "
              + GatewayAttributes.FIRST_CHUNK
              + "="
              + GatewayAttributes.FIRST_CHUNK_UNSUPPORTED
              + ". Observed stacks: JDK HttpServer, Jetty 12, Netty 4.1/4.2 HTTP/1.x (Reactor Netty, Vert.x),"
              + " Jakarta Servlet 5+ (Tomcat 10+, Undertow). To have yours covered, open an issue naming this server"
              + " (the README's \"Gateway stacks\" lists what is tested).");
    }
  }

  @Override
  public boolean isOnEndingRequired() {
    return true;
  }

  @Override
  public void onStart(Context parentContext, ReadWriteSpan span) {}

  @Override
  public boolean isStartRequired() {
    return false;
  }

  @Override
  public void onEnd(ReadableSpan span) {}

  @Override
  public boolean isEndRequired() {
    return false;
  }
}
