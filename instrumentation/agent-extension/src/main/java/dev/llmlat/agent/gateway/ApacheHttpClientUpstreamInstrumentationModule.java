package dev.llmlat.agent.gateway;

import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasClassesNamed;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.llmlat.agent.gateway.internal.ApacheUpstream;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.TypeInstrumentation;
import io.opentelemetry.javaagent.extension.instrumentation.TypeTransformer;
import java.util.List;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;

/**
 * The upstream side of gateways that call the engine with Apache HttpClient 5, classic I/O
 * (directly, or through Spring's {@code HttpComponentsClientHttpRequestFactory}): when the engine's
 * first content chunk is read from the response entity.
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
    return hasClassesNamed("org.apache.hc.core5.http.impl.io.HttpRequestExecutor",
        "org.apache.hc.core5.http.io.entity.HttpEntityWrapper");
  }

  @Override
  public List<String> getAdditionalHelperClassNames() {
    return GatewayHelpers.withUpstream("ApacheUpstream", "ApacheUpstreamEntity", "ApacheUpstreamEntity$Observed");
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new ExecuteInstrumentation());
  }

  static final class ExecuteInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("org.apache.hc.core5.http.impl.io.HttpRequestExecutor");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      // execute(request, connection, informationCallback, context): every classic exchange, once the
      // response head and its entity (not yet read) are received
      transformer.applyAdviceToMethod(
          named("execute").and(isPublic()).and(takesArguments(4))
              .and(takesArgument(0, named("org.apache.hc.core5.http.ClassicHttpRequest"))),
          ApacheHttpClientUpstreamInstrumentationModule.class.getName() + "$ExecuteAdvice");
    }
  }

  @SuppressWarnings("unused")
  public static final class ExecuteAdvice {
    private ExecuteAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(@Advice.Argument(0) ClassicHttpRequest request, @Advice.Return ClassicHttpResponse response) {
      ApacheUpstream.observe(request, response);
    }
  }
}
