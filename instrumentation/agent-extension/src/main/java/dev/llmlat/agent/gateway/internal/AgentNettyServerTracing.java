package dev.llmlat.agent.gateway.internal;

import io.netty.channel.ChannelHandler;
import java.lang.reflect.Method;

/**
 * The agent's own Netty server tracing handler (its {@code netty-4.1} instrumentation, agent 2.x),
 * for pipelines the agent does not trace: it adds that handler behind HTTP/1.x server codecs only,
 * so an HTTP/2 stream's channel, whose {@code Http2StreamFrameToHttpObjectCodec} turns frames into
 * the same {@code HttpRequest}s and {@code HttpResponse}s, gets no SERVER span without this. The
 * handler comes from the agent's helper {@code NettyServerSingletons}, injected into the class
 * loader of the gateway's Netty as this class is; looked up by name, so another agent version just
 * yields null (and the stream is not traced).
 */
final class AgentNettyServerTracing {
  private static final String SINGLETONS =
      "io.opentelemetry.javaagent.instrumentation.netty.v4_1.NettyServerSingletons";

  /** The factory method once found; null until then, or for good once it could not be. */
  private static volatile Method factory;

  private static volatile boolean missing;

  private AgentNettyServerTracing() {}

  /** A new server tracing handler (request and response sides), or null where there is none. */
  static ChannelHandler newHandler() {
    if (missing) {
      return null;
    }
    try {
      Method create = factory;
      if (create == null) {
        create =
            factory =
                Class.forName(SINGLETONS, true, AgentNettyServerTracing.class.getClassLoader())
                    .getMethod("createCombinedHandler");
      }
      return (ChannelHandler) create.invoke(null);
    } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
      missing = true;
      return null;
    }
  }
}
