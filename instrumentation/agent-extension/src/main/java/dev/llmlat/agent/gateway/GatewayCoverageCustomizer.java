package dev.llmlat.agent.gateway;

import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizer;
import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizerProvider;

/** Adds {@link GatewayCoverageProcessor} to the agent's tracer provider. */
public final class GatewayCoverageCustomizer implements AutoConfigurationCustomizerProvider {
  @Override
  public void customize(AutoConfigurationCustomizer autoConfiguration) {
    autoConfiguration.addTracerProviderCustomizer(
        (builder, config) -> builder.addSpanProcessor(new GatewayCoverageProcessor()));
  }
}
