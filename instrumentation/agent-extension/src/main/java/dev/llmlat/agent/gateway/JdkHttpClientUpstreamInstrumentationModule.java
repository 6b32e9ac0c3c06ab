package dev.llmlat.agent.gateway;

import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasClassesNamed;
import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.llmlat.agent.gateway.internal.JdkConnection;
import dev.llmlat.agent.gateway.internal.JdkUpstreamBodyHandler;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.TypeInstrumentation;
import io.opentelemetry.javaagent.extension.instrumentation.TypeTransformer;
import io.opentelemetry.javaagent.extension.instrumentation.internal.ExperimentalInstrumentationModule;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The upstream side of gateways that call the engine with the JDK {@code HttpClient} (plain Java
 * gateways, Spring's {@code RestClient}/{@code JdkClientHttpRequestFactory}, Spring Cloud Gateway
 * Server MVC by default): when the engine's first content chunk reaches the client, and how an
 * HTTP/1.1 call got its connection ({@code JdkConnection}, hooked in the client's internals, the
 * same in JDK 11 to 25): taken from the idle pool or made for it (the client never waits for a
 * connection: it has no bound on those in use), a new one's TCP connect and TLS handshake, the
 * request's headers and body handed to the connection. HTTP/2 exchanges get the connect only.
 */
public final class JdkHttpClientUpstreamInstrumentationModule extends InstrumentationModule
    implements ExperimentalInstrumentationModule {

  public JdkHttpClientUpstreamInstrumentationModule() {
    super("llmlat-gateway", "llmlat-upstream-java-http-client");
  }

  @Override
  public int order() {
    // after the agent's java-http-client module: its CLIENT span is current inside send/sendAsync
    return 10;
  }

  @Override
  public boolean defaultEnabled(io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties config) {
    return true;
  }

  @Override
  public ElementMatcher.Junction<ClassLoader> classLoaderMatcher() {
    return hasClassesNamed("java.net.http.HttpClient");
  }

  @Override
  public List<String> getAdditionalHelperClassNames() {
    return GatewayHelpers.withUpstream(
        "JdkUpstreamBodyHandler",
        "JdkUpstreamBodySubscriber",
        "UpstreamConnection",
        "NamedVirtualField",
        "JdkConnection",
        "JdkConnection$Call",
        "JdkConnection$Mark");
  }

  @Override
  public void registerVirtualFields(BiConsumer<String, String> virtualFields) {
    // JdkConnection's state on the client's objects (no muzzle code generation here: named by hand)
    String call = GatewayHelpers.helper("JdkConnection$Call");
    virtualFields.accept(JdkConnection.MULTI_EXCHANGE, call);
    virtualFields.accept(JdkConnection.EXCHANGE, call);
    virtualFields.accept(JdkConnection.HTTP_CONNECTION, Boolean.class.getName());
    virtualFields.accept(JdkConnection.SSL_CONNECTION, call);
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(
        new SendAsyncInstrumentation(),
        new ExchangeInstrumentation(),
        new Http1ExchangeInstrumentation(),
        new ConnectionPoolInstrumentation(),
        new PlainConnectionInstrumentation(),
        new SslConnectionInstrumentation());
  }

  private static String advice(String name) {
    return JdkHttpClientUpstreamInstrumentationModule.class.getName() + "$" + name;
  }

  private static final String INTERNAL = "jdk.internal.net.http.";

  static final class ExchangeInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named(INTERNAL + "Exchange");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // Exchange(request, multi[, acc]): the call's first is made in its MultiExchange's
      // constructor, in sendAsync
      transformer.applyAdviceToMethod(
          isConstructor()
              .and(takesArgument(0, named(INTERNAL + "HttpRequestImpl")))
              .and(takesArgument(1, named(INTERNAL + "MultiExchange"))),
          advice("ExchangeAdvice"));
    }
  }

  static final class Http1ExchangeInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named(INTERNAL + "Http1Exchange");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // Http1Exchange(exchange, connection): gets its connection from the pool or a new one when
      // given none
      transformer.applyAdviceToMethod(
          isConstructor()
              .and(takesArguments(2))
              .and(takesArgument(0, named(INTERNAL + "Exchange"))),
          advice("Http1ExchangeAdvice"));
      transformer.applyAdviceToMethod(
          named("sendHeadersAsync").and(takesArguments(0)), advice("SendHeadersAdvice"));
      transformer.applyAdviceToMethod(
          named("sendBodyAsync").and(takesArguments(0)), advice("SendBodyAdvice"));
    }
  }

  static final class ConnectionPoolInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named(INTERNAL + "ConnectionPool");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // getConnection(secure, address, proxy): an idle connection, or null
      transformer.applyAdviceToMethod(
          named("getConnection")
              .and(takesArguments(3))
              .and(takesArgument(1, named("java.net.InetSocketAddress"))),
          advice("PoolGetAdvice"));
    }
  }

  static final class PlainConnectionInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named(INTERNAL + "PlainHttpConnection");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // connectAsync(exchange): the non-blocking TCP connect, its future completes once connected
      transformer.applyAdviceToMethod(
          named("connectAsync")
              .and(takesArguments(1))
              .and(takesArgument(0, named(INTERNAL + "Exchange"))),
          advice("ConnectAdvice"));
    }
  }

  static final class SslConnectionInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named(INTERNAL + "AsyncSSLConnection");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // connectAsync(exchange): its plain connection's connect, then the SSL tube; finishConnect():
      // the handshake
      transformer.applyAdviceToMethod(
          named("connectAsync")
              .and(takesArguments(1))
              .and(takesArgument(0, named(INTERNAL + "Exchange"))),
          advice("SslConnectAdvice"));
      transformer.applyAdviceToMethod(
          named("finishConnect").and(takesArguments(0)), advice("FinishConnectAdvice"));
    }
  }

  @SuppressWarnings("unused")
  public static final class ExchangeAdvice {
    private ExchangeAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(
        @Advice.This Object exchange,
        @Advice.Argument(0) HttpRequest request,
        @Advice.Argument(1) Object multi) {
      JdkConnection.exchange(exchange, request, multi);
    }
  }

  @SuppressWarnings("unused")
  public static final class Http1ExchangeAdvice {
    private Http1ExchangeAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.Argument(0) Object exchange, @Advice.Argument(1) Object given) {
      JdkConnection.acquiring(exchange, given);
    }

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(
        @Advice.Argument(0) Object exchange, @Advice.FieldValue("connection") Object connection) {
      JdkConnection.acquired(exchange, connection);
    }
  }

  @SuppressWarnings("unused")
  public static final class PoolGetAdvice {
    private PoolGetAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(@Advice.Return Object connection) {
      JdkConnection.pooled(connection);
    }
  }

  @SuppressWarnings({"unused", "rawtypes"})
  public static final class ConnectAdvice {
    private ConnectAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(
        @Advice.Argument(0) Object exchange,
        @Advice.Return(readOnly = false) CompletableFuture connecting) {
      connecting = JdkConnection.connecting(exchange, connecting);
    }
  }

  @SuppressWarnings("unused")
  public static final class SslConnectAdvice {
    private SslConnectAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.This Object connection, @Advice.Argument(0) Object exchange) {
      JdkConnection.secureConnecting(connection, exchange);
    }
  }

  @SuppressWarnings({"unused", "rawtypes"})
  public static final class FinishConnectAdvice {
    private FinishConnectAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(
        @Advice.This Object connection,
        @Advice.Return(readOnly = false) CompletableFuture finishing) {
      finishing = JdkConnection.handshaking(connection, finishing);
    }
  }

  @SuppressWarnings({"unused", "rawtypes"})
  public static final class SendHeadersAdvice {
    private SendHeadersAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(
        @Advice.FieldValue("exchange") Object exchange,
        @Advice.Return(readOnly = false) CompletableFuture sent) {
      sent = JdkConnection.sendingHeaders(exchange, sent);
    }
  }

  @SuppressWarnings({"unused", "rawtypes"})
  public static final class SendBodyAdvice {
    private SendBodyAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(
        @Advice.FieldValue("exchange") Object exchange,
        @Advice.Return(readOnly = false) CompletableFuture sent) {
      sent = JdkConnection.sendingBody(exchange, sent);
    }
  }

  static final class SendAsyncInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("jdk.internal.net.http.HttpClientImpl");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // The private sendAsync(request, handler, pushPromiseHandler, executor) that send and both
      // public sendAsync reach (JDK 11 to 25): one place, inside the agent's CLIENT span scope.
      transformer.applyAdviceToMethod(
          named("sendAsync")
              .and(takesArguments(4))
              .and(takesArgument(0, named("java.net.http.HttpRequest")))
              .and(takesArgument(1, named("java.net.http.HttpResponse$BodyHandler"))),
          JdkHttpClientUpstreamInstrumentationModule.class.getName() + "$SendAsyncAdvice");
    }
  }

  @SuppressWarnings({"unused", "rawtypes", "unchecked"})
  public static final class SendAsyncAdvice {
    private SendAsyncAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.Argument(0) HttpRequest request,
        @Advice.Argument(value = 1, readOnly = false) HttpResponse.BodyHandler handler) {
      handler = JdkUpstreamBodyHandler.observe(request, handler);
    }
  }
}
