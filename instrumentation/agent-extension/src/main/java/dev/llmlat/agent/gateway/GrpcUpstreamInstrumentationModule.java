package dev.llmlat.agent.gateway;

import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasClassesNamed;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.llmlat.agent.gateway.internal.GrpcUpstreamInterceptor;
import io.grpc.ClientInterceptor;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.TypeInstrumentation;
import io.opentelemetry.javaagent.extension.instrumentation.TypeTransformer;
import java.util.List;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Gateways that call their engine over gRPC (grpc-java): as a channel is built, puts {@link
 * GrpcUpstreamInterceptor} first in the interceptors of the builder every transport's builder
 * delegates to ({@code ManagedChannelImplBuilder}), after the agent's grpc module put its tracing
 * interceptor there (the order below), so it runs inside it.
 */
public final class GrpcUpstreamInstrumentationModule extends InstrumentationModule {

  public GrpcUpstreamInstrumentationModule() {
    super("llmlat-gateway", "llmlat-upstream-grpc");
  }

  @Override
  public int order() {
    return 10; // after the agent's grpc-1.6 module: its interceptor is first when ours goes in
  }

  @Override
  public boolean defaultEnabled(io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties config) {
    return true;
  }

  @Override
  public ElementMatcher.Junction<ClassLoader> classLoaderMatcher() {
    return hasClassesNamed(
        "io.grpc.internal.ManagedChannelImplBuilder", "io.grpc.ForwardingClientCall");
  }

  @Override
  public List<String> getAdditionalHelperClassNames() {
    return GatewayHelpers.withUpstream(
        "GrpcUpstreamInterceptor",
        "GrpcUpstreamInterceptor$ObservedCall",
        "GrpcUpstreamInterceptor$ObservedListener");
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new ChannelBuildInstrumentation());
  }

  static final class ChannelBuildInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("io.grpc.internal.ManagedChannelImplBuilder");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      transformer.applyAdviceToMethod(
          named("build").and(takesArguments(0)),
          GrpcUpstreamInstrumentationModule.class.getName() + "$BuildAdvice");
    }
  }

  @SuppressWarnings("unused")
  public static final class BuildAdvice {
    private BuildAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.FieldValue("interceptors") List<ClientInterceptor> interceptors) {
      GrpcUpstreamInterceptor.install(interceptors);
    }
  }
}
