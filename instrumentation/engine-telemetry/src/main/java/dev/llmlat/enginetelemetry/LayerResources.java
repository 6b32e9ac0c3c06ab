package dev.llmlat.enginetelemetry;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.resources.Resource;

/**
 * Resources that tell llmlat's layers apart ({@code llmlat.layer}), for the engine's tracer
 * providers.
 */
public final class LayerResources {
  private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");
  private static final AttributeKey<String> HOST_NAME =
      AttributeKey.stringKey(LlmlatAttributes.HOST_NAME);
  private static final AttributeKey<Long> PROCESS_PID = AttributeKey.longKey("process.pid");
  private static final AttributeKey<String> LAYER = AttributeKey.stringKey(LlmlatAttributes.LAYER);

  private LayerResources() {}

  /** The scheduler's resource: {@code llmlat.layer=engine}. */
  public static Resource engine(String serviceName) {
    return of(serviceName, LlmlatAttributes.LAYER_ENGINE);
  }

  /** SDK defaults plus service name, host name, pid and the given {@code llmlat.layer}. */
  public static Resource of(String serviceName, String layer) {
    if (serviceName == null || serviceName.isBlank()) {
      throw new IllegalArgumentException("service name is required");
    }
    if (layer == null || layer.isBlank()) {
      throw new IllegalArgumentException("layer is required");
    }
    return Resource.getDefault()
        .merge(
            Resource.builder()
                .put(SERVICE_NAME, serviceName)
                .put(HOST_NAME, hostName())
                .put(PROCESS_PID, ProcessHandle.current().pid())
                .put(LAYER, layer)
                .build());
  }

  // The environment, not a DNS lookup: resolving the local name can stall for seconds.
  private static String hostName() {
    String name = System.getenv("HOSTNAME");
    if (name == null || name.isBlank()) {
      try {
        name = java.nio.file.Files.readString(java.nio.file.Path.of("/etc/hostname")).trim();
      } catch (java.io.IOException | RuntimeException e) {
        name = "localhost";
      }
    }
    return name;
  }
}
