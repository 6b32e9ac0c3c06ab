package dev.llmlat.otlpjson;

import io.opentelemetry.proto.resource.v1.Resource;

/**
 * The resource a run of spans shares: one per {@code resourceSpans} object, the same instance for
 * all its spans. A resource (or schemaUrl) the file puts after its spans is known here by the end
 * of its request, and from the first span on in later reads by the same {@link OtlpJsonReader}.
 */
public final class ResourceGroup {
  private Resource resource = Resource.getDefaultInstance();
  private String schemaUrl = "";

  ResourceGroup() {}

  public Resource resource() {
    return resource;
  }

  public String schemaUrl() {
    return schemaUrl;
  }

  void resource(Resource resource) {
    this.resource = resource;
  }

  void schemaUrl(String schemaUrl) {
    this.schemaUrl = schemaUrl;
  }
}
