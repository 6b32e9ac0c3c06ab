package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gatewayapp.JdkGatewayMain;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A gateway whose first requests come before its exporter has heard from the broker (the broker
 * starts late, or answers a gateway still starting on a loaded machine slowly): those requests'
 * spans wait in the exporter's queue and reach Kafka once the broker answers, none dropped for lack
 * of metadata after {@code max.block}. The exporter waits for a first answer as long as the
 * producer's delivery timeout, set long here so that the broker's start-up always fits in it.
 */
class GatewayBeforeItsBrokerIT {
  private static final Pattern DROPPED = Pattern.compile("(\\d+) spans dropped");

  @Test
  void spansOfRequestsBeforeTheBrokerAnsweredReachKafka() throws Exception {
    TestBroker broker = TestBroker.shared();
    broker.stop();
    List<String> traces = new ArrayList<>();
    try (FakeEngine engine = new FakeEngine(3, 10, 5);
        GatewayProcess gateway =
            GatewayProcess.start(
                GatewayProcess.java17OrCurrent(),
                JdkGatewayMain.class,
                GatewayProcess.extensionWithKafka(
                    broker.bootstrapServers(),
                    "-Dotel.exporter.kafka.max.block=200ms",
                    "-Dotel.exporter.kafka.log.interval=1s",
                    "-Dotel.exporter.kafka.producer.properties=delivery.timeout.ms=180000"),
                engine.baseUrl())) {
      GatewayClient client = new GatewayClient();
      for (int i = 0; i < 3; i++) {
        GatewayClient.Result r =
            client.post(gateway.baseUrl(), "/v1/chat/completions", GatewayClient.chatBody(true, 8));
        assertThat(r.status()).isEqualTo(200);
        traces.add(engine.take().traceId());
      }
      broker.ensureRunning();
      try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
        for (String traceId : traces) {
          // the gateway's SERVER span and its upstream CLIENT span
          assertThat(
                  topic.trace(traceId, 2, Duration.ofSeconds(60)).stream()
                      .mapToInt(r -> r.spans().size())
                      .sum())
              .as(
                  "spans of trace %s, sent before the broker answered; gateway log:\n%s",
                  traceId, gateway.log())
              .isEqualTo(2);
        }
      }
      assertThat(GatewayAgentIT.lastNumber(DROPPED, gateway.log()))
          .as("gateway log:\n%s", gateway.log())
          .isZero();
    }
  }
}
