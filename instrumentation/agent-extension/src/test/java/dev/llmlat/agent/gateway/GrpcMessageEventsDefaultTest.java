package dev.llmlat.agent.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.sdk.autoconfigure.spi.internal.DefaultConfigProperties;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GrpcMessageEventsDefaultTest {
  @Test
  void messageEventsAreOffUnlessTheUserSetThem() {
    assertThat(GrpcMessageEventsDefault.defaults(DefaultConfigProperties.createFromMap(Map.of())))
        .containsExactly(Map.entry(GrpcMessageEventsDefault.MESSAGE_EVENTS, "false"));
    assertThat(
            GrpcMessageEventsDefault.defaults(
                DefaultConfigProperties.createFromMap(
                    Map.of(GrpcMessageEventsDefault.MESSAGE_EVENTS, "true"))))
        .isEmpty();
  }
}
