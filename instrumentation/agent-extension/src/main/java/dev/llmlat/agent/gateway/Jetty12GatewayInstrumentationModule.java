package dev.llmlat.agent.gateway;

import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasClassesNamed;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;

import dev.llmlat.agent.gateway.internal.JettyGatewayStream;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.TypeInstrumentation;
import io.opentelemetry.javaagent.extension.instrumentation.TypeTransformer;
import java.util.List;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;
import org.eclipse.jetty.server.Request;

/**
 * Gateways on Jetty 12 (core handlers or servlets): wraps each OpenAI-style request's {@code
 * HttpStream} where the agent's {@code jetty} instrumentation starts the SERVER span.
 */
public final class Jetty12GatewayInstrumentationModule extends InstrumentationModule {

  public Jetty12GatewayInstrumentationModule() {
    super("llmlat-gateway", "llmlat-gateway-jetty-12.0");
  }

  @Override
  public int order() {
    // after the agent's jetty-12.0 module: its SERVER span is current when our advice runs
    return 10;
  }

  @Override
  public boolean defaultEnabled(io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties config) {
    return true;
  }

  @Override
  public ElementMatcher.Junction<ClassLoader> classLoaderMatcher() {
    return hasClassesNamed(
        "org.eclipse.jetty.server.Request$Handler", "org.eclipse.jetty.server.HttpStream$Wrapper");
  }

  @Override
  public List<String> getAdditionalHelperClassNames() {
    return GatewayHelpers.withCommon("JettyGatewayStream", "JettyGatewayStream$TimedSend");
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new ServerHandleInstrumentation());
  }

  static final class ServerHandleInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("org.eclipse.jetty.server.Server");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      transformer.applyAdviceToMethod(
          named("handle")
              .and(takesArgument(0, named("org.eclipse.jetty.server.Request")))
              .and(takesArgument(1, named("org.eclipse.jetty.server.Response")))
              .and(isPublic()),
          Jetty12GatewayInstrumentationModule.class.getName() + "$HandleAdvice");
    }
  }

  @SuppressWarnings("unused")
  public static final class HandleAdvice {
    private HandleAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(@Advice.Argument(0) Request request) {
      JettyGatewayStream.install(request);
    }
  }
}
