package dev.llmlat.agent.it;

import dev.llmlat.agent.gatewayapp.JettyGatewayMain;
import java.util.concurrent.TimeUnit;

/**
 * {@link BackpressureIT}'s proof on Jetty 12's core handlers: the Jetty relay writes each chunk
 * through the response's sink and waits for it; while the client does not read, Jetty's send of the
 * chunk completes only once the full socket took it, and that wait is the SERVER span's
 * backpressure.
 */
class Jetty12BackpressureIT extends BackpressureIT {
  /** None: a send that waited does not say what was full. */
  @Override
  String expectedCause() {
    return null;
  }

  /**
   * As for servlets ({@link ServletBackpressureIT}): a send that waits sees every moment a prompt
   * reader on a loaded machine is off the CPU. Far below the paused client's 2.5 s.
   */
  @Override
  long promptReaderAllowanceNanos() {
    return TimeUnit.MILLISECONDS.toNanos(100);
  }

  @Override
  GatewayProcess startGateway(TestBroker broker, FakeEngine engine) throws Exception {
    return GatewayProcess.start(
        GatewayProcess.currentJava(),
        JettyGatewayMain.class,
        GatewayProcess.extensionWithKafka(broker.bootstrapServers()),
        engine.baseUrl());
  }
}
