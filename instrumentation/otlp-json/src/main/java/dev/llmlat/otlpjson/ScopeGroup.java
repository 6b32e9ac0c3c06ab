package dev.llmlat.otlpjson;

import io.opentelemetry.proto.common.v1.InstrumentationScope;

/**
 * The resource and scope a run of spans shares: one per {@code scopeSpans} object, the same
 * instance for all its spans. A scope (or schemaUrl) the file puts after its spans is known here by
 * the end of its request, and from the first span on in later reads by the same {@link
 * OtlpJsonReader}.
 */
public final class ScopeGroup {
  private final ResourceGroup resourceGroup;
  private InstrumentationScope scope = InstrumentationScope.getDefaultInstance();
  private String schemaUrl = "";

  ScopeGroup(ResourceGroup resourceGroup) {
    this.resourceGroup = resourceGroup;
  }

  public ResourceGroup resourceGroup() {
    return resourceGroup;
  }

  public InstrumentationScope scope() {
    return scope;
  }

  public String schemaUrl() {
    return schemaUrl;
  }

  void scope(InstrumentationScope scope) {
    this.scope = scope;
  }

  void schemaUrl(String schemaUrl) {
    this.schemaUrl = schemaUrl;
  }
}
