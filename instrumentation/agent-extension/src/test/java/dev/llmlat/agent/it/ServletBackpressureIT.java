package dev.llmlat.agent.it;

import dev.llmlat.agent.gatewayapp.TomcatGatewayMain;

/**
 * {@link BackpressureIT}'s proof on a servlet container: the Tomcat relay writes each chunk to the
 * container's blocking stream and flushes it; while the client does not read, the flush blocks on
 * the full socket, and that blocking is the SERVER span's backpressure.
 */
class ServletBackpressureIT extends BackpressureIT {
  /** None: a container's blocked write does not say what was full. */
  @Override
  String expectedCause() {
    return null;
  }

  /**
   * A blocking write sees every moment the client does not read: a prompt reader on a loaded
   * machine is now and then off the CPU for a few ms, which the container's write waits out. Far
   * below the paused client's 2.5 s.
   */
  @Override
  long promptReaderAllowanceNanos() {
    return java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(100);
  }

  @Override
  GatewayProcess startGateway(TestBroker broker, FakeEngine engine) throws Exception {
    return GatewayProcess.start(
        GatewayProcess.java17OrCurrent(),
        TomcatGatewayMain.class,
        GatewayProcess.extensionWithKafka(
            broker.bootstrapServers(),
            "-Dotel.instrumentation.tomcat.enabled=true",
            "-Dotel.instrumentation.servlet.enabled=true"),
        engine.baseUrl());
  }
}
