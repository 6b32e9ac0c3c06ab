package dev.llmlat.agent.gateway;

import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasClassesNamed;
import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.implementsInterface;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.llmlat.agent.gateway.internal.ApacheConnection;
import dev.llmlat.agent.gateway.internal.ApacheUpstream;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.TypeInstrumentation;
import io.opentelemetry.javaagent.extension.instrumentation.TypeTransformer;
import java.util.List;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;
import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.client5.http.classic.ExecRuntime;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.protocol.HttpContext;

/**
 * The upstream side of gateways that call the engine with Apache HttpClient 5, classic I/O
 * (directly, or through Spring's {@code HttpComponentsClientHttpRequestFactory}): when the engine's
 * first content chunk is read from the response entity, and how the call got its connection ({@code
 * ApacheConnection}): the endpoint lease from the connection manager (with the pool's figures for
 * the route), a new connection's TCP connect and TLS handshake (the connection operator's hooks
 * from 5.4, the socket factories before), and the request's head and body written. Methods are
 * matched by names that 5.2 to 5.5 share; a hook whose method is absent does nothing.
 */
public final class ApacheHttpClientUpstreamInstrumentationModule extends InstrumentationModule {

  public ApacheHttpClientUpstreamInstrumentationModule() {
    super("llmlat-gateway", "llmlat-upstream-apache-httpclient-5.0");
  }

  @Override
  public int order() {
    return 10; // after the agent's apache-httpclient-5.0 module: its CLIENT span is current
  }

  @Override
  public boolean defaultEnabled(io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties config) {
    return true;
  }

  @Override
  public ElementMatcher.Junction<ClassLoader> classLoaderMatcher() {
    return hasClassesNamed(
        "org.apache.hc.core5.http.impl.io.HttpRequestExecutor",
        "org.apache.hc.core5.http.io.entity.HttpEntityWrapper");
  }

  @Override
  public List<String> getAdditionalHelperClassNames() {
    return GatewayHelpers.withUpstream(
        "ApacheUpstream",
        "ApacheUpstreamEntity",
        "ApacheUpstreamEntity$Observed",
        "UpstreamConnection",
        "ApacheConnection");
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(
        new ExecuteInstrumentation(),
        new ConnectExecInstrumentation(),
        new ExecRuntimeInstrumentation(),
        new ConnectionOperatorInstrumentation(),
        new SocketFactoryInstrumentation(),
        new LayeredSocketFactoryInstrumentation(),
        new ClientConnectionInstrumentation());
  }

  private static String advice(String name) {
    return ApacheHttpClientUpstreamInstrumentationModule.class.getName() + "$" + name;
  }

  static final class ExecuteInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("org.apache.hc.core5.http.impl.io.HttpRequestExecutor");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // execute(request, connection, informationCallback, context): every classic exchange, once
      // the
      // response head and its entity (not yet read) are received
      transformer.applyAdviceToMethod(
          named("execute")
              .and(isPublic())
              .and(takesArguments(4))
              .and(takesArgument(0, named("org.apache.hc.core5.http.ClassicHttpRequest"))),
          ApacheHttpClientUpstreamInstrumentationModule.class.getName() + "$ExecuteAdvice");
    }
  }

  @SuppressWarnings("unused")
  public static final class ExecuteAdvice {
    private ExecuteAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(@Advice.Argument(3) HttpContext context) {
      ApacheConnection.writing(context);
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    public static void onExit(
        @Advice.Argument(0) ClassicHttpRequest request,
        @Advice.Return ClassicHttpResponse response) {
      ApacheConnection.written();
      ApacheUpstream.observe(request, response);
    }
  }

  static final class ConnectExecInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("org.apache.hc.client5.http.impl.classic.ConnectExec");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // the stage that acquires and connects the endpoint, with the request as the chain has it
      transformer.applyAdviceToMethod(
          named("execute")
              .and(isPublic())
              .and(takesArguments(3))
              .and(takesArgument(1, named("org.apache.hc.client5.http.classic.ExecChain$Scope"))),
          advice("ConnectExecAdvice"));
    }
  }

  static final class ExecRuntimeInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("org.apache.hc.client5.http.impl.classic.InternalExecRuntime");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // acquireEndpoint(id, route, state, context): the lease and the wait for it
      transformer.applyAdviceToMethod(
          named("acquireEndpoint")
              .and(isPublic())
              .and(takesArguments(4))
              .and(takesArgument(1, named("org.apache.hc.client5.http.HttpRoute"))),
          advice("AcquireEndpointAdvice"));
    }
  }

  static final class ConnectionOperatorInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("org.apache.hc.client5.http.impl.io.DefaultHttpClientConnectionOperator");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // 5.4 and later: the operator's own hooks around the socket connect and the TLS upgrade
      transformer.applyAdviceToMethod(
          socketHook("onBeforeSocketConnect"), advice("BeforeSocketConnectAdvice"));
      transformer.applyAdviceToMethod(
          socketHook("onAfterSocketConnect"), advice("AfterSocketConnectAdvice"));
      transformer.applyAdviceToMethod(
          socketHook("onBeforeTlsHandshake"), advice("BeforeTlsHandshakeAdvice"));
      transformer.applyAdviceToMethod(
          socketHook("onAfterTlsHandshake"), advice("AfterTlsHandshakeAdvice"));
    }

    private static ElementMatcher.Junction<MethodDescription> socketHook(String name) {
      return named(name)
          .and(takesArguments(2))
          .and(takesArgument(0, named("org.apache.hc.core5.http.protocol.HttpContext")));
    }
  }

  static final class SocketFactoryInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return implementsInterface(
          named("org.apache.hc.client5.http.socket.ConnectionSocketFactory"));
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // before 5.4 the socket factory connects (and the TLS one upgrades within): every
      // connectSocket
      // overload ends with the context; the outermost enter and the innermost exit count
      transformer.applyAdviceToMethod(
          named("connectSocket")
              .and(isPublic())
              .and(
                  takesArgument(0, named("java.net.Socket"))
                      .or(takesArgument(1, named("java.net.Socket")))),
          advice("ConnectSocketAdvice"));
    }
  }

  static final class LayeredSocketFactoryInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return implementsInterface(
          named("org.apache.hc.client5.http.socket.LayeredConnectionSocketFactory"));
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // createLayeredSocket(socket, target, port, attachment, context): the TLS handshake before
      // 5.4
      transformer.applyAdviceToMethod(
          named("createLayeredSocket")
              .and(isPublic())
              .and(takesArguments(5))
              .and(takesArgument(4, named("org.apache.hc.core5.http.protocol.HttpContext"))),
          advice("LayeredSocketAdvice"));
    }
  }

  static final class ClientConnectionInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("org.apache.hc.core5.http.impl.io.DefaultBHttpClientConnection");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      transformer.applyAdviceToMethod(
          named("sendRequestHeader").and(isPublic()).and(takesArguments(1)),
          advice("RequestHeaderAdvice"));
      transformer.applyAdviceToMethod(
          named("sendRequestEntity").and(isPublic()).and(takesArguments(1)),
          advice("RequestEntityAdvice"));
    }
  }

  @SuppressWarnings("unused")
  public static final class ConnectExecAdvice {
    private ConnectExecAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.Argument(0) ClassicHttpRequest request, @Advice.Argument(1) ExecChain.Scope scope) {
      ApacheConnection.begin(request, scope.clientContext);
    }
  }

  @SuppressWarnings("unused")
  public static final class AcquireEndpointAdvice {
    private AcquireEndpointAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.FieldValue("manager") Object manager,
        @Advice.Argument(1) HttpRoute route,
        @Advice.Argument(3) HttpContext context) {
      ApacheConnection.acquireStart(context, manager, route, route.getTargetHost());
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    public static void onExit(
        @Advice.This ExecRuntime runtime,
        @Advice.Argument(3) HttpContext context,
        @Advice.Thrown Throwable thrown) {
      if (thrown == null) {
        ApacheConnection.acquired(context, runtime.isEndpointConnected());
      }
    }
  }

  @SuppressWarnings("unused")
  public static final class BeforeSocketConnectAdvice {
    private BeforeSocketConnectAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(@Advice.Argument(0) HttpContext context) {
      ApacheConnection.connectStart(context);
    }
  }

  @SuppressWarnings("unused")
  public static final class AfterSocketConnectAdvice {
    private AfterSocketConnectAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(@Advice.Argument(0) HttpContext context) {
      ApacheConnection.connected(context);
    }
  }

  @SuppressWarnings("unused")
  public static final class BeforeTlsHandshakeAdvice {
    private BeforeTlsHandshakeAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(@Advice.Argument(0) HttpContext context) {
      ApacheConnection.tlsStart(context);
    }
  }

  @SuppressWarnings("unused")
  public static final class AfterTlsHandshakeAdvice {
    private AfterTlsHandshakeAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(@Advice.Argument(0) HttpContext context) {
      ApacheConnection.tlsDone(context);
    }
  }

  @SuppressWarnings("unused")
  public static final class ConnectSocketAdvice {
    private ConnectSocketAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(@Advice.AllArguments Object[] arguments) {
      Object last = arguments.length == 0 ? null : arguments[arguments.length - 1];
      if (last instanceof HttpContext) {
        ApacheConnection.connectStart((HttpContext) last);
      }
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    public static void onExit(
        @Advice.AllArguments Object[] arguments, @Advice.Thrown Throwable thrown) {
      Object last = arguments.length == 0 ? null : arguments[arguments.length - 1];
      if (thrown == null && last instanceof HttpContext) {
        ApacheConnection.connected((HttpContext) last);
      }
    }
  }

  @SuppressWarnings("unused")
  public static final class LayeredSocketAdvice {
    private LayeredSocketAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(@Advice.Argument(4) HttpContext context) {
      ApacheConnection.tlsStart(context);
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    public static void onExit(
        @Advice.Argument(4) HttpContext context, @Advice.Thrown Throwable thrown) {
      if (thrown == null) {
        ApacheConnection.tlsDone(context);
      }
    }
  }

  @SuppressWarnings("unused")
  public static final class RequestHeaderAdvice {
    private RequestHeaderAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit() {
      ApacheConnection.headersWritten();
    }
  }

  @SuppressWarnings("unused")
  public static final class RequestEntityAdvice {
    private RequestEntityAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit() {
      ApacheConnection.bodyWritten();
    }
  }
}
