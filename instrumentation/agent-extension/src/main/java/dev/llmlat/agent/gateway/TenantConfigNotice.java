package dev.llmlat.agent.gateway;

import dev.llmlat.agent.gateway.internal.TenantConfig;
import io.opentelemetry.javaagent.extension.AgentListener;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Says once at agent start where the tenant is recorded from (opt-in only), or which setting was
 * refused and so turned the feature off.
 */
public final class TenantConfigNotice implements AgentListener {
  private static final Logger logger = Logger.getLogger(TenantConfigNotice.class.getName());

  @Override
  public void afterAgent(AutoConfiguredOpenTelemetrySdk sdk) {
    TenantConfig config = TenantConfig.current();
    if (config.problem() != null) {
      logger.log(Level.WARNING, config.problem());
    } else if (config.description() != null) {
      logger.log(Level.INFO, config.description());
    }
  }
}
