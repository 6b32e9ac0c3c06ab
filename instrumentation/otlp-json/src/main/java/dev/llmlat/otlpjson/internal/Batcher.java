package dev.llmlat.otlpjson.internal;

import dev.llmlat.otlpjson.ResourceGroup;
import dev.llmlat.otlpjson.ScopeGroup;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.function.Consumer;

/**
 * Regroups streamed spans into requests of at most {@code batchSize} spans, each span under its own
 * resource and scope. The caller ends a batch at the end of each request of the file (a line of the
 * Collector's file exporter), so small requests stay one batch each.
 */
public final class Batcher {
  private final int batchSize;
  private final Consumer<ExportTraceServiceRequest> batches;
  private ExportTraceServiceRequest.Builder request = ExportTraceServiceRequest.newBuilder();
  private ResourceSpans.Builder resourceSpans;
  private ScopeSpans.Builder scopeSpans;
  private ResourceGroup resource;
  private ScopeGroup scope;
  private int pending;

  public Batcher(int batchSize, Consumer<ExportTraceServiceRequest> batches) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("batch size " + batchSize + " (at least 1)");
    }
    this.batchSize = batchSize;
    this.batches = batches;
  }

  public void add(ScopeGroup group, Span span) {
    if (group != scope) {
      closeScope();
      if (group.resourceGroup() != resource) {
        closeResource();
        resource = group.resourceGroup();
        resourceSpans =
            ResourceSpans.newBuilder()
                .setResource(resource.resource())
                .setSchemaUrl(resource.schemaUrl());
      }
      scope = group;
      scopeSpans = ScopeSpans.newBuilder().setScope(group.scope()).setSchemaUrl(group.schemaUrl());
    }
    scopeSpans.addSpans(span);
    if (++pending >= batchSize) {
      flush();
    }
  }

  /** Hands over what is pending as one batch. */
  public void flush() {
    if (pending == 0) {
      return;
    }
    closeScope();
    closeResource();
    batches.accept(request.build());
    request = ExportTraceServiceRequest.newBuilder();
    pending = 0;
    resource = null;
    scope = null;
  }

  private void closeScope() {
    if (scopeSpans != null) {
      resourceSpans.addScopeSpans(scopeSpans);
      scopeSpans = null;
    }
    scope = null;
  }

  private void closeResource() {
    if (resourceSpans != null) {
      request.addResourceSpans(resourceSpans);
      resourceSpans = null;
    }
    resource = null;
  }
}
