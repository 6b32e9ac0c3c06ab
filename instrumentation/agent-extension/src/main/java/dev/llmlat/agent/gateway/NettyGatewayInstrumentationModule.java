package dev.llmlat.agent.gateway;

import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasClassesNamed;
import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.implementsInterface;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.llmlat.agent.gateway.internal.NettyConnectTimer;
import dev.llmlat.agent.gateway.internal.NettyGatewayHandler;
import dev.llmlat.agent.gateway.internal.NettyUpstreamHandler;
import dev.llmlat.agent.gateway.internal.ReactorNettyAcquire;
import dev.llmlat.agent.gateway.internal.VertxAcquire;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.TypeInstrumentation;
import io.opentelemetry.javaagent.extension.instrumentation.TypeTransformer;
import io.opentelemetry.javaagent.extension.instrumentation.internal.ExperimentalInstrumentationModule;
import java.util.List;
import java.util.function.BiConsumer;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;
import reactor.core.publisher.MonoSink;
import reactor.netty.Connection;
import reactor.netty.internal.shaded.reactor.pool.InstrumentedPool;
import reactor.netty.internal.shaded.reactor.pool.PooledRef;

/**
 * Gateways on Netty 4.1/4.2 HTTP/1.x servers and clients (Reactor Netty, Spring WebFlux and Spring
 * Cloud Gateway, Vert.x, Micronaut): puts {@code NettyGatewayHandler} behind the HTTP server codec,
 * where the agent's {@code netty-4.1} instrumentation puts its own server tracing handler (and
 * behind an HTTP/2 server stream's HTTP/1.x codec, with the agent's handler the agent leaves out
 * there), and {@code NettyUpstreamHandler} behind the HTTP client codec (the engine's first chunk
 * received, the channel's connect and TLS handshake, the request written); and, where the client is
 * Reactor Netty's, follows its connection pool's acquisitions ({@code ReactorNettyAcquire}: Reactor
 * Netty 1.2 and 1.3, whose reactor-pool is shaded inside reactor-netty-core); where it is Vert.x's
 * (4.5 and 5), its pool's leases ({@code VertxAcquire}) and, as Vert.x adds the HTTP codec only
 * once a channel is connected, the channel's connect and TLS handshake ({@code NettyConnectTimer}).
 */
public final class NettyGatewayInstrumentationModule extends InstrumentationModule
    implements ExperimentalInstrumentationModule {

  public NettyGatewayInstrumentationModule() {
    super("llmlat-gateway", "llmlat-gateway-netty-4.1");
  }

  @Override
  public int order() {
    return 10; // after the agent's netty-4.1 module
  }

  @Override
  public boolean defaultEnabled(io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties config) {
    return true;
  }

  @Override
  public ElementMatcher.Junction<ClassLoader> classLoaderMatcher() {
    // CombinedHttpHeaders: Netty 4.1.0 and later, as the agent's netty-4.1 module requires
    return hasClassesNamed(
        "io.netty.handler.codec.http.HttpServerCodec",
        "io.netty.handler.codec.http.CombinedHttpHeaders");
  }

  @Override
  public List<String> getAdditionalHelperClassNames() {
    return GatewayHelpers.withCommon(
        "NettyGatewayHandler",
        "NettyHttp2Windows",
        "NettyHttp2DataFrames",
        "AgentNettyServerTracing",
        "UpstreamExchange",
        "NettyAgentContexts",
        "NettyUpstreamHandler",
        "UpstreamConnection",
        "NamedVirtualField",
        "ReactorNettyAcquire",
        "ReactorNettyAcquire$Started",
        "VertxAcquire",
        "VertxAcquire$Waiters",
        "VertxAcquire$Acquisition",
        "NettyConnectTimer",
        "NettyConnectTimer$Connected",
        "NettyConnectTimer$Cancelled",
        "NettyConnectTimer$Handshaken");
  }

  @Override
  public void registerVirtualFields(BiConsumer<String, String> virtualFields) {
    // the pools' state on their objects (no muzzle code generation here: named by hand)
    virtualFields.accept(
        "reactor.core.publisher.MonoSink", GatewayHelpers.helper("ReactorNettyAcquire$Started"));
    String acquisition = GatewayHelpers.helper("VertxAcquire$Acquisition");
    virtualFields.accept(VertxAcquire.HANDLER_4, acquisition);
    virtualFields.accept(VertxAcquire.HANDLER_5, acquisition);
    virtualFields.accept(VertxAcquire.CONNECTION, acquisition);
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(
        new PipelineAddInstrumentation(),
        new ReactorNettyAcquireInstrumentation(),
        new VertxPoolInstrumentation(),
        new VertxLeaseInstrumentation(),
        new VertxStreamInstrumentation(),
        new VertxChannelInstrumentation());
  }

  /** Vert.x 4.5 and 5 keep the pool in different packages, with the same classes and members. */
  private static final String[] VERTX_POOLS = {
    "io.vertx.core.net.impl.pool.", "io.vertx.core.internal.pool."
  };

  private static String[] vertxPool(String simpleName) {
    return new String[] {VERTX_POOLS[0] + simpleName, VERTX_POOLS[1] + simpleName};
  }

  static final class VertxPoolInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return namedOneOf(vertxPool("SimpleConnectionPool"));
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // acquire(context, listener, kind, handler) and acquire(context, kind, handler): a lease is
      // asked for
      transformer.applyAdviceToMethod(
          named("acquire").and(isPublic()).and(takesArguments(4)).and(takesArgument(2, int.class)),
          NettyGatewayInstrumentationModule.class.getName() + "$VertxAcquireAdvice");
      transformer.applyAdviceToMethod(
          named("acquire").and(isPublic()).and(takesArguments(3)).and(takesArgument(1, int.class)),
          NettyGatewayInstrumentationModule.class.getName() + "$VertxAcquireWithoutListenerAdvice");
    }
  }

  static final class VertxLeaseInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return namedOneOf(vertxPool("SimpleConnectionPool$LeaseImpl"));
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // emit(): the lease (its connection) is handed to the waiter's handler
      transformer.applyAdviceToMethod(
          named("emit").and(takesArguments(0)),
          NettyGatewayInstrumentationModule.class.getName() + "$VertxLeaseAdvice");
    }
  }

  static final class VertxStreamInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("io.vertx.core.http.impl.Http1xClientConnection");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // createStream(context[, handler]): the leased connection makes the request's stream
      transformer.applyAdviceToMethod(
          named("createStream").and(isPublic()),
          NettyGatewayInstrumentationModule.class.getName() + "$VertxStreamAdvice");
    }
  }

  static final class VertxChannelInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("io.vertx.core.net.impl.ChannelProvider");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // initSSL(handler, peer, serverName, ssl, ..., channel, promise): each new client channel,
      // before its connect
      transformer.applyAdviceToMethod(
          named("initSSL")
              .and(takesArguments(7))
              .and(takesArgument(5, named("io.netty.channel.Channel"))),
          NettyGatewayInstrumentationModule.class.getName() + "$VertxChannelAdvice");
    }
  }

  @SuppressWarnings("unused")
  public static final class VertxAcquireAdvice {
    private VertxAcquireAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.This Object pool,
        @Advice.FieldValue("maxCapacity") int maxCapacity,
        @Advice.FieldValue("capacityFactors") int[] capacityFactors,
        @Advice.Argument(2) int kind,
        @Advice.Argument(3) Object handler) {
      VertxAcquire.started(handler, pool, maxCapacity, capacityFactors, kind);
    }
  }

  @SuppressWarnings("unused")
  public static final class VertxAcquireWithoutListenerAdvice {
    private VertxAcquireWithoutListenerAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.This Object pool,
        @Advice.FieldValue("maxCapacity") int maxCapacity,
        @Advice.FieldValue("capacityFactors") int[] capacityFactors,
        @Advice.Argument(1) int kind,
        @Advice.Argument(2) Object handler) {
      VertxAcquire.started(handler, pool, maxCapacity, capacityFactors, kind);
    }
  }

  @SuppressWarnings("unused")
  public static final class VertxLeaseAdvice {
    private VertxLeaseAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.FieldValue("handler") Object handler,
        @Advice.FieldValue("connection") Object connection) {
      VertxAcquire.granted(handler, connection);
    }
  }

  @SuppressWarnings("unused")
  public static final class VertxStreamAdvice {
    private VertxStreamAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.This Object connection, @Advice.FieldValue("chctx") ChannelHandlerContext context) {
      VertxAcquire.streamCreated(connection, context);
    }
  }

  @SuppressWarnings("unused")
  public static final class VertxChannelAdvice {
    private VertxChannelAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(@Advice.Argument(5) Channel channel) {
      NettyConnectTimer.install(channel);
    }
  }

  static final class PipelineAddInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return implementsInterface(named("io.netty.channel.ChannelPipeline"));
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // addFirst/addLast(group, name, handler), addBefore/addAfter(base, name, handler) and
      // addBefore/addAfter(group, base, name, handler): each public add reaches one or two of
      // these (the handler is added once whatever the count)
      transformer.applyAdviceToMethod(
          nameStartsWith("add")
              .and(takesArguments(3))
              .and(takesArgument(1, String.class))
              .and(takesArgument(2, named("io.netty.channel.ChannelHandler"))),
          NettyGatewayInstrumentationModule.class.getName() + "$PipelineAddAdvice");
      transformer.applyAdviceToMethod(
          nameStartsWith("add")
              .and(takesArguments(4))
              .and(takesArgument(2, String.class))
              .and(takesArgument(3, named("io.netty.channel.ChannelHandler"))),
          NettyGatewayInstrumentationModule.class.getName() + "$PipelineAddWithGroupAdvice");
    }
  }

  static final class ReactorNettyAcquireInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("reactor.netty.resources.DefaultPooledConnectionProvider$DisposableAcquire");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // onSubscribe: the acquisition asks the pool; onNext(pooledRef): it got a connection
      transformer.applyAdviceToMethod(
          named("onSubscribe").and(takesArguments(1)),
          NettyGatewayInstrumentationModule.class.getName() + "$AcquireStartAdvice");
      transformer.applyAdviceToMethod(
          named("onNext")
              .and(takesArguments(1))
              .and(takesArgument(0, named("reactor.netty.internal.shaded.reactor.pool.PooledRef"))),
          NettyGatewayInstrumentationModule.class.getName() + "$AcquiredAdvice");
    }
  }

  @SuppressWarnings("unused")
  public static final class AcquireStartAdvice {
    private AcquireStartAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.FieldValue("sink") MonoSink<?> sink,
        @Advice.FieldValue("pool") InstrumentedPool<?> pool) {
      InstrumentedPool.PoolMetrics metrics = pool.metrics();
      ReactorNettyAcquire.started(
          sink,
          metrics.getMaxAllocatedSize(),
          metrics.pendingAcquireSize(),
          metrics.acquiredSize());
    }
  }

  @SuppressWarnings("unused")
  public static final class AcquiredAdvice {
    private AcquiredAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.FieldValue("sink") MonoSink<?> sink, @Advice.Argument(0) PooledRef<?> ref) {
      Object poolable = ref.poolable();
      if (poolable instanceof Connection) {
        ReactorNettyAcquire.acquired(
            sink, ((Connection) poolable).channel(), ref.metadata().acquireCount());
      }
    }
  }

  @SuppressWarnings("unused")
  public static final class PipelineAddAdvice {
    private PipelineAddAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(
        @Advice.This ChannelPipeline pipeline, @Advice.Argument(2) ChannelHandler handler) {
      NettyGatewayHandler.addAfterServerCodec(pipeline, handler);
      NettyUpstreamHandler.addAfterClientCodec(pipeline, handler);
    }
  }

  @SuppressWarnings("unused")
  public static final class PipelineAddWithGroupAdvice {
    private PipelineAddWithGroupAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(
        @Advice.This ChannelPipeline pipeline, @Advice.Argument(3) ChannelHandler handler) {
      NettyGatewayHandler.addAfterServerCodec(pipeline, handler);
      NettyUpstreamHandler.addAfterClientCodec(pipeline, handler);
    }
  }
}
