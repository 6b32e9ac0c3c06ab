package dev.llmlat.agent.gateway;

import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasClassesNamed;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.llmlat.agent.gateway.internal.JettyConnection;
import dev.llmlat.agent.gateway.internal.JettyUpstream;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.TypeInstrumentation;
import io.opentelemetry.javaagent.extension.instrumentation.TypeTransformer;
import io.opentelemetry.javaagent.extension.instrumentation.internal.ExperimentalInstrumentationModule;
import java.util.List;
import java.util.function.BiConsumer;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;
import org.eclipse.jetty.client.Connection;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.transport.HttpDestination;
import org.eclipse.jetty.client.transport.HttpExchange;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.Promise;

/**
 * The upstream side of gateways that call the engine with Jetty 12's {@code HttpClient} (Spring
 * Cloud Gateway Server MVC on Jetty, whose request factory Spring picks when jetty-client is
 * present): when the engine's first content chunk reaches the client, and how the call got its
 * connection ({@code JettyConnection}): the destination's queue, the connection handed to the
 * exchange, a new plain connection's connect, the request committed and sent.
 */
public final class JettyClientUpstreamInstrumentationModule extends InstrumentationModule
    implements ExperimentalInstrumentationModule {

  public JettyClientUpstreamInstrumentationModule() {
    super("llmlat-gateway", "llmlat-upstream-jetty-httpclient-12.0");
  }

  @Override
  public int order() {
    // after the agent's jetty-httpclient-12.0 module: its CLIENT span is current inside send
    return 10;
  }

  @Override
  public boolean defaultEnabled(io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties config) {
    return true;
  }

  @Override
  public ElementMatcher.Junction<ClassLoader> classLoaderMatcher() {
    return hasClassesNamed("org.eclipse.jetty.client.transport.ResponseListeners");
  }

  @Override
  public List<String> getAdditionalHelperClassNames() {
    return GatewayHelpers.withUpstream(
        "JettyUpstream",
        "JettyUpstreamContentSource",
        "UpstreamConnection",
        "JettyConnection",
        "JettyConnection$Opened",
        "JettyConnection$TimedPromise");
  }

  @Override
  public void registerVirtualFields(BiConsumer<String, String> virtualFields) {
    // JettyConnection's state on the client's connections (no muzzle code generation here: named by
    // hand)
    virtualFields.accept(
        "org.eclipse.jetty.client.Connection", GatewayHelpers.helper("JettyConnection$Opened"));
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(
        new SendInstrumentation(),
        new ContentSourceInstrumentation(),
        new DestinationInstrumentation(),
        new NewConnectionInstrumentation());
  }

  static final class SendInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("org.eclipse.jetty.client.transport.HttpRequest");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // send(listener): where the blocking send() and every asynchronous send go
      transformer.applyAdviceToMethod(
          named("send")
              .and(isPublic())
              .and(takesArguments(1))
              .and(takesArgument(0, named("org.eclipse.jetty.client.Response$CompleteListener"))),
          JettyClientUpstreamInstrumentationModule.class.getName() + "$SendAdvice");
    }
  }

  static final class ContentSourceInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("org.eclipse.jetty.client.transport.ResponseListeners");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      transformer.applyAdviceToMethod(
          named("notifyContentSource")
              .and(isPublic())
              .and(takesArguments(2))
              .and(takesArgument(0, named("org.eclipse.jetty.client.Response")))
              .and(takesArgument(1, named("org.eclipse.jetty.io.Content$Source"))),
          JettyClientUpstreamInstrumentationModule.class.getName() + "$ContentSourceAdvice");
    }
  }

  static final class DestinationInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("org.eclipse.jetty.client.transport.HttpDestination");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // send(exchange): the exchange joins the queue; send(connection, exchange): it leaves it on a
      // connection
      transformer.applyAdviceToMethod(
          named("send")
              .and(isPublic())
              .and(takesArguments(1))
              .and(takesArgument(0, named("org.eclipse.jetty.client.transport.HttpExchange"))),
          JettyClientUpstreamInstrumentationModule.class.getName() + "$QueueAdvice");
      transformer.applyAdviceToMethod(
          named("send")
              .and(takesArguments(2))
              .and(takesArgument(0, named("org.eclipse.jetty.client.transport.IConnection")))
              .and(takesArgument(1, named("org.eclipse.jetty.client.transport.HttpExchange"))),
          JettyClientUpstreamInstrumentationModule.class.getName() + "$ConnectionSendAdvice");
    }
  }

  static final class NewConnectionInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("org.eclipse.jetty.client.HttpClient");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      transformer.applyAdviceToMethod(
          named("newConnection")
              .and(isPublic())
              .and(takesArguments(2))
              .and(takesArgument(0, named("org.eclipse.jetty.client.Destination")))
              .and(takesArgument(1, named("org.eclipse.jetty.util.Promise"))),
          JettyClientUpstreamInstrumentationModule.class.getName() + "$NewConnectionAdvice");
    }
  }

  @SuppressWarnings("unused")
  public static final class QueueAdvice {
    private QueueAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.This HttpDestination destination, @Advice.Argument(0) HttpExchange exchange) {
      JettyConnection.queued(destination, exchange);
    }
  }

  @SuppressWarnings("unused")
  public static final class ConnectionSendAdvice {
    private ConnectionSendAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.Argument(0) Connection connection, @Advice.Argument(1) HttpExchange exchange) {
      JettyConnection.sending(connection, exchange);
    }
  }

  @SuppressWarnings("unused")
  public static final class NewConnectionAdvice {
    private NewConnectionAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.Argument(0) Destination destination,
        @Advice.Argument(value = 1, readOnly = false) Promise<Connection> promise) {
      promise = JettyConnection.timed(destination, promise);
    }
  }

  @SuppressWarnings("unused")
  public static final class SendAdvice {
    private SendAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(@Advice.This Request request) {
      JettyUpstream.onSend(request);
    }
  }

  @SuppressWarnings("unused")
  public static final class ContentSourceAdvice {
    private ContentSourceAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.Argument(0) Response response,
        @Advice.Argument(value = 1, readOnly = false) Content.Source source) {
      source = JettyUpstream.observe(response, source);
    }
  }
}
