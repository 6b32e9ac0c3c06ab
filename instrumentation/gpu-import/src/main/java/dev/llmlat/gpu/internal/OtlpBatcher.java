package dev.llmlat.gpu.internal;

import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.otlpkafka.SpanSink;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;

/**
 * Regroups streamed OTLP spans into requests of at most {@code batchSize} spans, each span under
 * its own resource and scope, and hands each to the sink as a {@link SpanBatch}. A request of the
 * file (a line of the Collector's file exporter) ends a batch, so small requests stay one batch each.
 */
final class OtlpBatcher {
  private final int batchSize;
  private final SpanSink sink;
  private ExportTraceServiceRequest.Builder request = ExportTraceServiceRequest.newBuilder();
  private ResourceSpans.Builder resourceSpans;
  private ScopeSpans.Builder scopeSpans;
  private OtlpJson.ResourceGroup resource;
  private OtlpJson.ScopeGroup scope;
  private int pending;
  private long spans;
  private long batches;

  OtlpBatcher(int batchSize, SpanSink sink) {
    this.batchSize = batchSize;
    this.sink = sink;
  }

  void add(OtlpJson.ScopeGroup group, Span span) {
    if (group != scope) {
      closeScope();
      if (group.resource != resource) {
        closeResource();
        resource = group.resource;
        resourceSpans = ResourceSpans.newBuilder().setResource(resource.resource).setSchemaUrl(resource.schemaUrl);
      }
      scope = group;
      scopeSpans = ScopeSpans.newBuilder().setScope(group.scope).setSchemaUrl(group.schemaUrl);
    }
    scopeSpans.addSpans(span);
    spans++;
    if (++pending >= batchSize) {
      flush();
    }
  }

  /** Hands over what is pending as one batch. */
  void flush() {
    if (pending == 0) {
      return;
    }
    closeScope();
    closeResource();
    sink.accept(SpanBatch.of(request.build()));
    batches++;
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

  long spans() {
    return spans;
  }

  long batches() {
    return batches;
  }
}
