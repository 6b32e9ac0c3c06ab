package dev.llmlat.agent.gateway;

import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasClassesNamed;
import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;

import dev.llmlat.agent.gateway.internal.ObservedServletRequest;
import dev.llmlat.agent.gateway.internal.ServletGateway;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.TypeInstrumentation;
import io.opentelemetry.javaagent.extension.instrumentation.TypeTransformer;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.util.List;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Gateways on Jakarta Servlet containers (Tomcat 10+, Undertow 2.2+, Jetty 11): the first filter or
 * servlet that receives an OpenAI-style request receives observing wrappers instead, inside the
 * SERVER span the agent's container instrumentation ({@code tomcat}, {@code undertow}, ...)
 * started.
 */
public final class ServletGatewayInstrumentationModule extends InstrumentationModule {

  public ServletGatewayInstrumentationModule() {
    super("llmlat-gateway", "llmlat-gateway-servlet-5.0");
  }

  @Override
  public int order() {
    return 10; // after the agent's servlet and container modules: their SERVER span is current
  }

  @Override
  public boolean defaultEnabled(io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties config) {
    return true;
  }

  @Override
  public ElementMatcher.Junction<ClassLoader> classLoaderMatcher() {
    return hasClassesNamed("jakarta.servlet.http.HttpServletRequestWrapper");
  }

  @Override
  public List<String> getAdditionalHelperClassNames() {
    return GatewayHelpers.withCommon(
        "ServletGateway",
        "ObservedServletRequest",
        "ObservedServletResponse",
        "ObservedServletInputStream",
        "ObservedServletOutputStream",
        "ObservedReader",
        "ObservedWriter");
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new ServletAndFilterInstrumentation());
  }

  static final class ServletAndFilterInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<ClassLoader> classLoaderOptimization() {
      return hasClassesNamed("jakarta.servlet.Servlet");
    }

    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return hasSuperType(namedOneOf("jakarta.servlet.Filter", "jakarta.servlet.Servlet"));
    }

    @Override
    public void transform(TypeTransformer transformer) {
      transformer.applyAdviceToMethod(
          namedOneOf("doFilter", "service")
              .and(takesArgument(0, named("jakarta.servlet.ServletRequest")))
              .and(takesArgument(1, named("jakarta.servlet.ServletResponse")))
              .and(isPublic()),
          ServletGatewayInstrumentationModule.class.getName() + "$ServiceAdvice");
    }
  }

  @SuppressWarnings("unused")
  public static final class ServiceAdvice {
    private ServiceAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static ObservedServletRequest onEnter(
        @Advice.Argument(value = 0, readOnly = false) ServletRequest request,
        @Advice.Argument(value = 1, readOnly = false) ServletResponse response) {
      ObservedServletRequest observed = ServletGateway.observe(request, response);
      if (observed != null) {
        request = observed;
        response = observed.observedResponse();
      }
      return observed;
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    public static void onExit(@Advice.Enter ObservedServletRequest observed) {
      if (observed != null) {
        ServletGateway.serviceReturned(observed);
      }
    }
  }
}
