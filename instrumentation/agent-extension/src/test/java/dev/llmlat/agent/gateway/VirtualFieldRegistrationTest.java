package dev.llmlat.agent.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gateway.internal.VertxAcquire;
import io.opentelemetry.javaagent.extension.instrumentation.InstrumentationModule;
import io.opentelemetry.javaagent.extension.instrumentation.internal.ExperimentalInstrumentationModule;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The virtual fields each module registers for the agent by name (no muzzle code generation here):
 * every owner is a class of the library it instruments, found where the helpers look it up, and
 * every value is a class the module injects (or the JDK's), so a misspelt name fails here, not in a
 * gateway.
 */
class VirtualFieldRegistrationTest {

  @Test
  void jdkHttpClientFieldsAreOnItsInternalClasses() throws Exception {
    List<Map.Entry<String, String>> fields =
        check(
            new JdkHttpClientUpstreamInstrumentationModule(),
            HttpRequest.class.getClassLoader(),
            Set.of());
    assertThat(fields)
        .extracting(Map.Entry::getKey)
        .containsExactlyInAnyOrder(
            "jdk.internal.net.http.MultiExchange", "jdk.internal.net.http.Exchange",
            "jdk.internal.net.http.HttpConnection", "jdk.internal.net.http.AsyncSSLConnection");
  }

  @Test
  void nettyModuleFieldsAreOnReactorAndVertxClasses() throws Exception {
    // the test class path has Vert.x 4.5: 5's handler type is not there
    List<Map.Entry<String, String>> fields =
        check(
            new NettyGatewayInstrumentationModule(),
            getClass().getClassLoader(),
            Set.of(VertxAcquire.HANDLER_5));
    assertThat(fields)
        .extracting(Map.Entry::getKey)
        .containsExactlyInAnyOrder(
            "reactor.core.publisher.MonoSink",
            "io.vertx.core.Handler",
            "io.vertx.core.Completable",
            "io.vertx.core.http.impl.Http1xClientConnection");
  }

  @Test
  void jettyClientFieldIsOnItsConnections() throws Exception {
    List<Map.Entry<String, String>> fields =
        check(
            new JettyClientUpstreamInstrumentationModule(), getClass().getClassLoader(), Set.of());
    assertThat(fields)
        .extracting(Map.Entry::getKey)
        .containsExactly("org.eclipse.jetty.client.Connection");
  }

  @Test
  void grpcFieldIsOnItsStreamsTransportState() throws Exception {
    List<Map.Entry<String, String>> fields =
        check(new GrpcGatewayInstrumentationModule(), getClass().getClassLoader(), Set.of());
    assertThat(fields)
        .extracting(Map.Entry::getKey)
        .containsExactly("io.grpc.internal.AbstractStream$TransportState");
  }

  /**
   * The module's fields, each owner loaded through {@code loader} (but {@code absentHere}) and each
   * value known.
   */
  private static List<Map.Entry<String, String>> check(
      InstrumentationModule module, ClassLoader loader, Set<String> absentHere) throws Exception {
    List<Map.Entry<String, String>> fields = new ArrayList<>();
    ((ExperimentalInstrumentationModule) module)
        .registerVirtualFields((owner, value) -> fields.add(Map.entry(owner, value)));
    List<String> helpers = module.getAdditionalHelperClassNames();
    for (Map.Entry<String, String> field : fields) {
      if (!absentHere.contains(field.getKey())) {
        assertThat(Class.forName(field.getKey(), false, loader))
            .as("owner %s", field.getKey())
            .isNotNull();
      }
      String value = field.getValue();
      assertThat(value.startsWith("java.") || helpers.contains(value))
          .as("value %s is injected with the module's helpers %s", value, helpers)
          .isTrue();
      assertThat(Class.forName(value, false, VirtualFieldRegistrationTest.class.getClassLoader()))
          .isNotNull();
    }
    return fields;
  }
}
