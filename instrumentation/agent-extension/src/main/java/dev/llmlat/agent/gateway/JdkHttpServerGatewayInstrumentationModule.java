package dev.llmlat.agent.gateway;

import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.extendsClass;
import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasClassesNamed;
import static net.bytebuddy.matcher.ElementMatchers.isMethod;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;

import com.sun.net.httpserver.HttpContext;
import dev.llmlat.agent.gateway.internal.JdkGatewayFilter;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.TypeInstrumentation;
import io.opentelemetry.javaagent.extension.instrumentation.TypeTransformer;
import java.util.List;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Gateways on the JDK's {@code com.sun.net.httpserver}: adds {@code JdkGatewayFilter} to every
 * context the application creates, next to the agent's own {@code java-http-server} filter.
 */
public final class JdkHttpServerGatewayInstrumentationModule extends InstrumentationModule {

  public JdkHttpServerGatewayInstrumentationModule() {
    super("llmlat-gateway", "llmlat-gateway-java-http-server");
  }

  @Override
  public int order() {
    // after the agent's java-http-server module (order 0): our filter is added after its filter
    return 10;
  }

  @Override
  public boolean defaultEnabled(io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties config) {
    // installing the extension is the opt-in; otel.instrumentation.llmlat-gateway.enabled=false
    // opts out
    return true;
  }

  @Override
  public ElementMatcher.Junction<ClassLoader> classLoaderMatcher() {
    return hasClassesNamed("com.sun.net.httpserver.HttpServer");
  }

  @Override
  public List<String> getAdditionalHelperClassNames() {
    return GatewayHelpers.withCommon(
        "JdkGatewayFilter", "JdkObservedRequestBody", "JdkObservedResponseBody");
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new CreateContextInstrumentation());
  }

  static final class CreateContextInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return extendsClass(named("com.sun.net.httpserver.HttpServer"));
    }

    @Override
    public void transform(TypeTransformer transformer) {
      transformer.applyAdviceToMethod(
          isMethod().and(isPublic()).and(named("createContext")),
          JdkHttpServerGatewayInstrumentationModule.class.getName() + "$CreateContextAdvice");
    }
  }

  @SuppressWarnings("unused")
  public static final class CreateContextAdvice {
    private CreateContextAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(@Advice.Return HttpContext context) {
      JdkGatewayFilter.install(context);
    }
  }
}
