package dev.llmlat.agent.gateway;

import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizer;
import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizerProvider;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import java.util.Map;

/**
 * Turns off the agent's gRPC message events ({@code otel.instrumentation.grpc.emit-message-events})
 * unless the user set them: on a streamed generation that is one event per token on the SERVER
 * span, and past the span's event limit (128) the first-chunk and backpressure events llmlat
 * records are dropped. Nothing in llmlat reads them.
 */
public final class GrpcMessageEventsDefault implements AutoConfigurationCustomizerProvider {
  static final String MESSAGE_EVENTS = "otel.instrumentation.grpc.emit-message-events";

  @Override
  public void customize(AutoConfigurationCustomizer autoConfiguration) {
    autoConfiguration.addPropertiesCustomizer(GrpcMessageEventsDefault::defaults);
  }

  static Map<String, String> defaults(ConfigProperties config) {
    return config.getString(MESSAGE_EVENTS) != null ? Map.of() : Map.of(MESSAGE_EVENTS, "false");
  }
}
