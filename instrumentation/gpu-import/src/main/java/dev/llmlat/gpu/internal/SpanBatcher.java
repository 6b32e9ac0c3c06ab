package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.OtlpAttributes;
import dev.llmlat.gpu.SpanSink;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.ArrayList;
import java.util.List;

/** Groups spans under the GPU resource into requests of at most {@code batchSize} spans. */
public final class SpanBatcher {
  static final InstrumentationScope SCOPE =
      InstrumentationScope.newBuilder().setName("dev.llmlat.gpu-import").setVersion("0.1.0").build();

  private final Resource resource;
  private final SpanSink sink;
  private final int batchSize;
  private final List<Span> pending;
  private long spans;
  private long batches;

  public SpanBatcher(String serviceName, String hostName, int batchSize, SpanSink sink) {
    Resource.Builder r = Resource.newBuilder()
        .addAttributes(OtlpAttributes.string("service.name", serviceName))
        .addAttributes(OtlpAttributes.string(LlmlatAttributes.LAYER, LlmlatAttributes.LAYER_GPU));
    if (hostName != null) {
      r.addAttributes(OtlpAttributes.string("host.name", hostName));
    }
    this.resource = r.build();
    this.sink = sink;
    this.batchSize = batchSize;
    this.pending = new ArrayList<>(Math.min(batchSize, 4096));
  }

  public void add(Span span) {
    pending.add(span);
    spans++;
    if (pending.size() >= batchSize) {
      flush();
    }
  }

  public void flush() {
    if (pending.isEmpty()) {
      return;
    }
    sink.accept(ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(ResourceSpans.newBuilder().setResource(resource)
            .addScopeSpans(ScopeSpans.newBuilder().setScope(SCOPE).addAllSpans(pending)))
        .build());
    batches++;
    pending.clear();
  }

  public long spans() {
    return spans;
  }

  public long batches() {
    return batches;
  }
}
