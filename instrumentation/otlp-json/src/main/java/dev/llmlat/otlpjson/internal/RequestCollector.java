package dev.llmlat.otlpjson.internal;

import dev.llmlat.otlpjson.ResourceGroup;
import dev.llmlat.otlpjson.ScopeGroup;
import dev.llmlat.otlpjson.SpanPosition;
import dev.llmlat.otlpjson.SpanVisitor;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Puts the spans of one root object back together as a request. Built at the request's end, so
 * resources and scopes the file puts after their spans are in it.
 */
public final class RequestCollector implements SpanVisitor {
  private final Consumer<ExportTraceServiceRequest> requests;
  private final Map<ResourceGroup, Map<ScopeGroup, List<Span>>> groups = new IdentityHashMap<>();
  private final List<ResourceGroup> order = new ArrayList<>();

  public RequestCollector(Consumer<ExportTraceServiceRequest> requests) {
    this.requests = requests;
  }

  @Override
  public void span(ScopeGroup group, Span span, SpanPosition where) {
    groups
        .computeIfAbsent(
            group.resourceGroup(),
            k -> {
              order.add(k);
              return new LinkedHashMap<>();
            })
        .computeIfAbsent(group, k -> new ArrayList<>())
        .add(span);
  }

  @Override
  public void endRequest() {
    ExportTraceServiceRequest.Builder request = ExportTraceServiceRequest.newBuilder();
    for (ResourceGroup r : order) {
      ResourceSpans.Builder rs =
          ResourceSpans.newBuilder().setResource(r.resource()).setSchemaUrl(r.schemaUrl());
      groups
          .get(r)
          .forEach(
              (s, spans) ->
                  rs.addScopeSpans(
                      ScopeSpans.newBuilder()
                          .setScope(s.scope())
                          .setSchemaUrl(s.schemaUrl())
                          .addAllSpans(spans)));
      request.addResourceSpans(rs);
    }
    groups.clear();
    order.clear();
    requests.accept(request.build());
  }
}
