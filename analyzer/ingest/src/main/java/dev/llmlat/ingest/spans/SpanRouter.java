package dev.llmlat.ingest.spans;

import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.RowBinaryWriter;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.Map;

/**
 * Sends each span of an OTLP request to its table: per-kernel GPU spans to {@code gpu_kernels},
 * everything else to {@code otel_traces}. Holds the rows until {@link #insertInto}.
 */
public final class SpanRouter {
  private final OtelTracesRowEncoder traces = new OtelTracesRowEncoder();
  private final GpuKernelRowEncoder kernels = new GpuKernelRowEncoder();

  /**
   * The resource attribute naming the import whose rows these are (spans; kernels have the column
   * ImportId).
   */
  public static final String IMPORT_ID_ATTRIBUTE = "llmlat.import.id";

  public SpanRouter add(ExportTraceServiceRequest request) {
    return add(request, null);
  }

  /**
   * Adds the request's spans as rows of import {@code importId} (null: of none): the spans carry it
   * in the resource attribute {@value #IMPORT_ID_ATTRIBUTE}, the kernels in their ImportId, as rows
   * an import writes into the store directly do.
   */
  public SpanRouter add(ExportTraceServiceRequest request, String importId) {
    for (ResourceSpans resourceSpans : request.getResourceSpansList()) {
      Map<String, String> resource =
          AttributeValues.toMap(resourceSpans.getResource().getAttributesList());
      if (importId != null) {
        resource.put(IMPORT_ID_ATTRIBUTE, importId);
      }
      String service = resource.getOrDefault("service.name", "");
      String layer = resource.getOrDefault(LlmlatAttributes.LAYER, "");
      GpuKernelRowEncoder.ResourceColumns kernelResource = null; // on the resource's first kernel
      for (ScopeSpans scopeSpans : resourceSpans.getScopeSpansList()) {
        RowBinaryWriter resourceAndScope =
            null; // encoded on the scope's first span for otel_traces
        for (Span span : scopeSpans.getSpansList()) {
          if (GpuKernelRowEncoder.isKernelSpan(layer, span)) {
            if (kernelResource == null) {
              kernelResource = GpuKernelRowEncoder.ResourceColumns.of(service, resource);
            }
            kernels.add(span, kernelResource);
          } else {
            if (resourceAndScope == null) {
              resourceAndScope =
                  OtelTracesRowEncoder.resourceAndScope(service, resource, scopeSpans.getScope());
            }
            traces.add(span, resourceAndScope);
          }
        }
      }
    }
    return this;
  }

  public int spans() {
    return traces.rows();
  }

  public int kernels() {
    return kernels.rows();
  }

  public int bytes() {
    return traces.bytes() + kernels.bytes();
  }

  /**
   * Inserts both tables' rows; the token (if any) is suffixed per table so a retry of the same
   * batch is deduplicated in each.
   */
  public void insertInto(ClickHouseStore store, String deduplicationToken) {
    insertInto(store, deduplicationToken, OtelTracesRowEncoder.TABLE, GpuKernelRowEncoder.TABLE);
  }

  /** The same, into tables of the same structure under other names (an import's staging tables). */
  public void insertInto(
      ClickHouseStore store, String deduplicationToken, String tracesTable, String kernelsTable) {
    traces.insertInto(
        store, deduplicationToken == null ? null : deduplicationToken + ".spans", tracesTable);
    kernels.insertInto(
        store, deduplicationToken == null ? null : deduplicationToken + ".kernels", kernelsTable);
  }
}
