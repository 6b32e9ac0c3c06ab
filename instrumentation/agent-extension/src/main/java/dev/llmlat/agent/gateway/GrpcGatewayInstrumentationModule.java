package dev.llmlat.agent.gateway;

import static io.opentelemetry.javaagent.extension.matcher.AgentElementMatchers.hasClassesNamed;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.llmlat.agent.gateway.internal.GrpcGatewayInterceptor;
import dev.llmlat.agent.gateway.internal.GrpcSendQueue;
import io.grpc.ServerInterceptor;
import io.grpc.internal.AbstractStream;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.TypeInstrumentation;
import io.opentelemetry.javaagent.extension.instrumentation.TypeTransformer;
import io.opentelemetry.javaagent.extension.instrumentation.internal.ExperimentalInstrumentationModule;
import java.util.List;
import java.util.function.BiConsumer;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * Gateways that serve gRPC (grpc-java 1.36+, on any transport): as a server is built, puts {@link
 * GrpcGatewayInterceptor} first in the interceptors of the builder every transport's builder
 * delegates to ({@code ServerImplBuilder}), so it runs inside the agent's tracing interceptor
 * (which the agent adds to the outer builder before); and watches each stream's bytes leave for the
 * wire ({@code AbstractStream.TransportState}: {@link GrpcSendQueue}).
 */
public final class GrpcGatewayInstrumentationModule extends InstrumentationModule
    implements ExperimentalInstrumentationModule {

  public GrpcGatewayInstrumentationModule() {
    super("llmlat-gateway", "llmlat-gateway-grpc");
  }

  @Override
  public int order() {
    return 10; // after the agent's grpc-1.6 module
  }

  @Override
  public boolean defaultEnabled(io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties config) {
    return true;
  }

  @Override
  public ElementMatcher.Junction<ClassLoader> classLoaderMatcher() {
    return hasClassesNamed("io.grpc.internal.ServerImplBuilder", "io.grpc.ForwardingServerCall");
  }

  @Override
  public List<String> getAdditionalHelperClassNames() {
    return GatewayHelpers.withCommon(
        "GrpcGatewayInterceptor",
        "GrpcGatewayCall",
        "GrpcGatewayCall$ObservedListener",
        "GrpcSendQueue");
  }

  @Override
  public void registerVirtualFields(BiConsumer<String, String> virtualFields) {
    // GrpcSendQueue's call on each stream's transport state (named by hand: no muzzle generation)
    virtualFields.accept(
        "io.grpc.internal.AbstractStream$TransportState", GatewayHelpers.helper("GrpcGatewayCall"));
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return List.of(new ServerBuildInstrumentation(), new TransportStateInstrumentation());
  }

  static final class ServerBuildInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("io.grpc.internal.ServerImplBuilder");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      transformer.applyAdviceToMethod(
          named("build").and(takesArguments(0)),
          GrpcGatewayInstrumentationModule.class.getName() + "$BuildAdvice");
    }
  }

  static final class TransportStateInstrumentation implements TypeInstrumentation {
    @Override
    public ElementMatcher<TypeDescription> typeMatcher() {
      return named("io.grpc.internal.AbstractStream$TransportState");
    }

    @Override
    public void transform(TypeTransformer transformer) {
      transformer.applyAdviceToMethod(
          named("onSendingBytes").and(takesArguments(1)).and(takesArgument(0, int.class)),
          GrpcGatewayInstrumentationModule.class.getName() + "$SendingAdvice");
      transformer.applyAdviceToMethod(
          named("onSentBytes").and(takesArguments(1)).and(takesArgument(0, int.class)),
          GrpcGatewayInstrumentationModule.class.getName() + "$SentAdvice");
    }
  }

  @SuppressWarnings("unused")
  public static final class SendingAdvice {
    private SendingAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(@Advice.This AbstractStream.TransportState state) {
      GrpcSendQueue.onSending(state);
    }
  }

  @SuppressWarnings("unused")
  public static final class SentAdvice {
    private SentAdvice() {}

    @Advice.OnMethodExit(suppress = Throwable.class)
    public static void onExit(
        @Advice.This AbstractStream.TransportState state,
        @Advice.FieldValue("numSentBytesQueued") int queued,
        @Advice.FieldValue("onReadyThreshold") int threshold) {
      GrpcSendQueue.onSent(state, queued, threshold);
    }
  }

  @SuppressWarnings("unused")
  public static final class BuildAdvice {
    private BuildAdvice() {}

    @Advice.OnMethodEnter(suppress = Throwable.class)
    public static void onEnter(
        @Advice.FieldValue("interceptors") List<ServerInterceptor> interceptors) {
      GrpcGatewayInterceptor.install(interceptors);
    }
  }
}
