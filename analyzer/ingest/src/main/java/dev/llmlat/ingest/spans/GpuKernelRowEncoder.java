package dev.llmlat.ingest.spans;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.List;
import java.util.Map;

/**
 * Encodes GPU kernel, memcpy and memset spans (resource {@code llmlat.layer=gpu}, span attribute
 * {@code llmlat.gpu.kind}) as {@code RowBinary} rows of the compact {@code gpu_kernels} table. The
 * attribute contract is in schemas/kafka/README.md. The requests a kernel served are its step
 * span's links, not a column here (view {@code gpu_kernel_requests}).
 */
public final class GpuKernelRowEncoder extends RowBinaryBatch {
  public static final String TABLE = "gpu_kernels";
  public static final String KIND = LlmlatAttributes.GPU_KIND;

  public static final List<String> COLUMNS =
      List.of(
          "Start",
          "DurationNs",
          "Kind",
          "Name",
          "Device",
          "Stream",
          "CorrelationId",
          "Bytes",
          "HostName",
          "Pid",
          "Tid",
          "StepSpanId",
          "StepName",
          "Source",
          "ClockRule",
          "ServiceName",
          "ImportId");

  public GpuKernelRowEncoder() {
    super(16 * 1024);
  }

  @Override
  String table() {
    return TABLE;
  }

  @Override
  List<String> columns() {
    return COLUMNS;
  }

  /** Whether a span of a resource in {@code layer} is a per-kernel span that belongs here. */
  public static boolean isKernelSpan(String layer, Span span) {
    if (!"gpu".equals(layer)) {
      return false;
    }
    for (KeyValue kv : span.getAttributesList()) {
      if (kv.getKey().equals(KIND)) {
        return true;
      }
    }
    return false;
  }

  public GpuKernelRowEncoder add(
      Span span, String serviceName, Map<String, String> resourceAttributes) {
    return add(span, ResourceColumns.of(serviceName, resourceAttributes));
  }

  /** What a kernel's row takes from its resource, read once for all the resource's kernels. */
  record ResourceColumns(String serviceName, String hostName, long pid, String importId) {
    static ResourceColumns of(String serviceName, Map<String, String> resourceAttributes) {
      return new ResourceColumns(
          serviceName,
          resourceAttributes.getOrDefault(LlmlatAttributes.HOST_NAME, ""),
          parseLong(resourceAttributes.get("process.pid")),
          resourceAttributes.getOrDefault(
              SpanRouter.IMPORT_ID_ATTRIBUTE, "")); // the import it came in, if any
    }
  }

  GpuKernelRowEncoder add(Span span, ResourceColumns resource) {
    String kind = "";
    String stepSpanId = "";
    String stepName = "";
    String source = "";
    String clockRule = "";
    long device = 0;
    long stream = 0;
    long correlation = 0;
    long bytes = 0;
    long pid = resource.pid();
    long tid = 0;
    List<KeyValue> attributes = span.getAttributesList();
    for (int i = 0; i < attributes.size(); i++) {
      KeyValue kv = attributes.get(i);
      AnyValue v = kv.getValue();
      switch (kv.getKey()) {
        case KIND -> kind = v.getStringValue();
        case LlmlatAttributes.GPU_DEVICE -> device = v.getIntValue();
        case LlmlatAttributes.GPU_STREAM -> stream = v.getIntValue();
        case LlmlatAttributes.CUDA_CORRELATION_ID -> correlation = v.getIntValue();
        case LlmlatAttributes.GPU_BYTES -> bytes = v.getIntValue();
        case "process.pid" -> pid = v.getIntValue();
        case LlmlatAttributes.THREAD_ID -> tid = v.getIntValue();
        case LlmlatAttributes.STEP_SPAN_ID -> stepSpanId = v.getStringValue();
        case LlmlatAttributes.STEP_NAME -> stepName = v.getStringValue();
        case LlmlatAttributes.GPU_SOURCE -> source = v.getStringValue();
        case LlmlatAttributes.CLOCK_RULE -> clockRule = v.getStringValue();
        default -> {}
      }
    }
    long start = span.getStartTimeUnixNano();
    long end = span.getEndTimeUnixNano();
    out.int64(start)
        .int64(end > start ? end - start : 0)
        .string(kind)
        .string(span.getName())
        .uint16((int) device)
        .uint32(stream)
        .int64(correlation)
        .int64(bytes)
        .string(resource.hostName())
        .uint32(pid)
        .uint32(tid)
        .string(stepSpanId)
        .string(stepName)
        .string(source)
        .string(clockRule)
        .string(resource.serviceName())
        .string(resource.importId());
    rows++;
    return this;
  }

  private static long parseLong(String s) {
    try {
      return s == null ? 0 : Long.parseLong(s);
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
