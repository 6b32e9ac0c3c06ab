package dev.llmlat.agent.resource;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.ResourceProvider;
import io.opentelemetry.sdk.resources.Resource;

/**
 * Marks everything this agent emits as the gateway layer ({@code llmlat.layer=gateway}), which the
 * analyzer uses to tell the layers apart. {@code otel.resource.attributes} still overrides it.
 */
public final class GatewayLayerResourceProvider implements ResourceProvider {
  @Override
  public Resource createResource(ConfigProperties config) {
    return Resource.create(
        Attributes.of(
            AttributeKey.stringKey(LlmlatAttributes.LAYER), LlmlatAttributes.LAYER_GATEWAY));
  }
}
