package dev.llmlat.agent.gateway;

import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasClassesNamed;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.llmlat.agent.gateway.internal.JdkUpstreamBodyHandler;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.TypeInstrumentation;
import io.opentelemetry.javaagent.extension.instrumentation.TypeTransformer;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The upstream side of gateways that call the engine with the JDK {@code HttpClient} (plain Java
 * gateways, Spring's {@code RestClient}/{@code JdkClientHttpRequestFactory}, Spring Cloud Gateway
 * Server MVC by default): when the engine's first content chunk reaches the client.
 */
public final class JdkHttpClientUpstreamInstrumentationModule extends InstrumentationModule {

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
    return GatewayHelpers.withUpstream("JdkUpstreamBodyHandler", "JdkUpstreamBodySubscriber");
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new SendAsyncInstrumentation());
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
