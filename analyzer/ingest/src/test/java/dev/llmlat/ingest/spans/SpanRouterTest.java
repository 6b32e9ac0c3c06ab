package dev.llmlat.ingest.spans;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.otlpjson.OtlpJsonReader;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.sharedtraces.SharedTraces;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.QueryResult;
import dev.llmlat.store.RowBinaryWriter;
import dev.llmlat.testing.SpanFixtures;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rows {@link SpanRouter} writes are byte for byte those of the plain mapping: each attribute
 * list made a map ({@link AttributeValues#toMap}) and written as one, ids as {@link HexFormat}
 * strings, the resource's and scope's columns written again for every span. The plain mapping is
 * spelled out here ({@link PlainRows}); real captures and lists with repeated keys go through both.
 */
class SpanRouterTest {
  /**
   * The gateway's spans of the real H200 capture (OTLP/JSON as the OpenTelemetry Java agent
   * exported them).
   */
  @Test
  void writesTheGatewayCaptureAsThePlainMappingDoes() throws Exception {
    List<ExportTraceServiceRequest> requests = new ArrayList<>();
    new OtlpJsonReader(SharedTraces.resolve("h200-e2e/gateway.otlp.jsonl"))
        .readRequests(requests::add);
    assertThat(requests).isNotEmpty();
    assertSameRows(requests, null);
    assertSameRows(requests, "import-7");
  }

  /**
   * The engine's Nsight Systems export of the same run: steps to otel_traces, kernels to
   * gpu_kernels.
   */
  @Test
  void writesTheImportedGpuCaptureAsThePlainMappingDoes() throws Exception {
    List<ExportTraceServiceRequest> requests = new ArrayList<>();
    GpuImporter.importFile(
        SharedTraces.resolve("h200-e2e/engine.sqlite"),
        ExportFormat.NSYS_SQLITE,
        ImportOptions.defaults(),
        batch -> {
          for (int i = 0; i < batch.recordCount(); i++) {
            try {
              requests.add(ExportTraceServiceRequest.parseFrom(batch.record(i)));
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
              throw new AssertionError(e);
            }
          }
        });
    SpanRouter router = new SpanRouter();
    requests.forEach(router::add);
    assertThat(router.kernels()).isPositive();
    assertThat(router.spans()).isPositive();
    assertSameRows(requests, null);
    assertSameRows(requests, "import-8");
  }

  @Test
  void writesEveryFieldAsThePlainMappingDoes() {
    assertSameRows(List.of(SpanFixtures.everyField()), null);
  }

  /**
   * OTLP forbids repeated keys; a map keeps the first place and the last value, and so do the rows.
   */
  @Test
  void aRepeatedKeyKeepsItsFirstPlaceAndItsLastValue() {
    List<KeyValue> few = List.of(kv("a", "1"), kv("b", "2"), kv("a", "3"));
    List<KeyValue> many = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      many.add(kv("k" + i, "v" + i));
    }
    many.add(kv("k5", "again"));
    Span span =
        span()
            .addAllAttributes(few)
            .addEvents(
                Span.Event.newBuilder().setTimeUnixNano(5).setName("e").addAllAttributes(many))
            .addLinks(
                Span.Link.newBuilder()
                    .setTraceId(SpanFixtures.id(SpanFixtures.LINK_TRACE))
                    .setSpanId(SpanFixtures.id(SpanFixtures.LINK_SPAN))
                    .addAllAttributes(few))
            .build();
    ExportTraceServiceRequest request =
        request(
            List.of(
                kv("service.name", "gw"),
                kv("service.name", "gateway"),
                kv(SpanRouter.IMPORT_ID_ATTRIBUTE, "stale")),
            span);
    assertSameRows(List.of(request), null);
    assertSameRows(
        List.of(request), "import-9"); // replaces the resource's own import id, in its place

    RowBinaryWriter expected =
        new RowBinaryWriter(64).varUInt(2).string("a").string("3").string("b").string("2");
    RowBinaryWriter written = new RowBinaryWriter(64);
    OtelTracesRowEncoder.attributes(written, few);
    assertThat(written.toByteArray()).isEqualTo(expected.toByteArray());
  }

  /**
   * Ids of any length (OTLP's are 16 and 8 bytes; an empty parent is the root's) in lower-case hex.
   */
  @Test
  void writesIdsOfAnyLengthInLowerCaseHex() {
    for (int length : new int[] {0, 1, 3, 4, 5, 8, 9, 16, 17}) {
      byte[] id = new byte[length];
      for (int i = 0; i < length; i++) {
        id[i] = (byte) (0xF7 - 13 * i);
      }
      RowBinaryWriter written = new RowBinaryWriter(64);
      OtelTracesRowEncoder.hex(written, ByteString.copyFrom(id));
      assertThat(written.toByteArray())
          .isEqualTo(new RowBinaryWriter(64).string(HexFormat.of().formatHex(id)).toByteArray());
    }
  }

  static Span.Builder span() {
    return Span.newBuilder()
        .setTraceId(SpanFixtures.id(SpanFixtures.TRACE))
        .setSpanId(SpanFixtures.id(SpanFixtures.SPAN))
        .setName("s")
        .setStartTimeUnixNano(1_000)
        .setEndTimeUnixNano(2_000);
  }

  static ExportTraceServiceRequest request(List<KeyValue> resource, Span span) {
    return ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(
            ResourceSpans.newBuilder()
                .setResource(Resource.newBuilder().addAllAttributes(resource))
                .addScopeSpans(
                    ScopeSpans.newBuilder()
                        .setScope(InstrumentationScope.newBuilder().setName("sc").setVersion("1"))
                        .addSpans(span)))
        .build();
  }

  static KeyValue kv(String key, String value) {
    return KeyValue.newBuilder()
        .setKey(key)
        .setValue(AnyValue.newBuilder().setStringValue(value))
        .build();
  }

  static void assertSameRows(List<ExportTraceServiceRequest> requests, String importId) {
    SpanRouter router = new SpanRouter();
    PlainRows plain = new PlainRows();
    for (ExportTraceServiceRequest r : requests) {
      router.add(r, importId);
      plain.add(r, importId);
    }
    Captured captured = new Captured();
    router.insertInto(captured, null);
    assertThat(captured.rows.getOrDefault(OtelTracesRowEncoder.TABLE, new byte[0]))
        .isEqualTo(plain.traces.toByteArray());
    assertThat(captured.rows.getOrDefault(GpuKernelRowEncoder.TABLE, new byte[0]))
        .isEqualTo(plain.kernels.toByteArray());
  }

  /**
   * The mapping without shortcuts: a map per attribute list, every column written for every row.
   */
  static final class PlainRows {
    final RowBinaryWriter traces = new RowBinaryWriter(1024);
    final RowBinaryWriter kernels = new RowBinaryWriter(1024);

    void add(ExportTraceServiceRequest request, String importId) {
      for (ResourceSpans rs : request.getResourceSpansList()) {
        Map<String, String> resource =
            new LinkedHashMap<>(AttributeValues.toMap(rs.getResource().getAttributesList()));
        if (importId != null) {
          resource.put(SpanRouter.IMPORT_ID_ATTRIBUTE, importId);
        }
        String service = resource.getOrDefault("service.name", "");
        for (ScopeSpans ss : rs.getScopeSpansList()) {
          for (Span span : ss.getSpansList()) {
            if (GpuKernelRowEncoder.isKernelSpan(
                resource.getOrDefault(LlmlatAttributes.LAYER, ""), span)) {
              kernel(span, service, resource);
            } else {
              span(span, ss.getScope(), service, resource);
            }
          }
        }
      }
    }

    void span(Span span, InstrumentationScope scope, String service, Map<String, String> resource) {
      long start = span.getStartTimeUnixNano();
      long end = span.getEndTimeUnixNano();
      RowBinaryWriter out = traces;
      out.int64(start)
          .string(hex(span.getTraceId()))
          .string(hex(span.getSpanId()))
          .string(hex(span.getParentSpanId()))
          .string(span.getTraceState())
          .string(span.getName())
          .string(OtelTracesRowEncoder.spanKind(span.getKind()))
          .string(service)
          .stringMap(resource)
          .string(scope.getName())
          .string(scope.getVersion())
          .stringMap(AttributeValues.toMap(span.getAttributesList()))
          .int64(end > start ? end - start : 0)
          .string(OtelTracesRowEncoder.statusCode(span.getStatus().getCode()))
          .string(span.getStatus().getMessage());
      out.arrayLength(span.getEventsCount());
      span.getEventsList().forEach(e -> out.int64(e.getTimeUnixNano()));
      out.arrayLength(span.getEventsCount());
      span.getEventsList().forEach(e -> out.string(e.getName()));
      out.arrayLength(span.getEventsCount());
      span.getEventsList()
          .forEach(e -> out.stringMap(AttributeValues.toMap(e.getAttributesList())));
      out.arrayLength(span.getLinksCount());
      span.getLinksList().forEach(l -> out.string(hex(l.getTraceId())));
      out.arrayLength(span.getLinksCount());
      span.getLinksList().forEach(l -> out.string(hex(l.getSpanId())));
      out.arrayLength(span.getLinksCount());
      span.getLinksList().forEach(l -> out.string(l.getTraceState()));
      out.arrayLength(span.getLinksCount());
      span.getLinksList().forEach(l -> out.stringMap(AttributeValues.toMap(l.getAttributesList())));
    }

    void kernel(Span span, String service, Map<String, String> resource) {
      Map<String, String> a = new LinkedHashMap<>();
      Map<String, Long> ints = new LinkedHashMap<>();
      span.getAttributesList()
          .forEach(
              kv -> {
                a.put(kv.getKey(), kv.getValue().getStringValue());
                ints.put(kv.getKey(), kv.getValue().getIntValue());
              });
      long resourcePid;
      try {
        resourcePid = Long.parseLong(resource.getOrDefault("process.pid", "0"));
      } catch (NumberFormatException e) {
        resourcePid = 0;
      }
      long start = span.getStartTimeUnixNano();
      long end = span.getEndTimeUnixNano();
      kernels
          .int64(start)
          .int64(end > start ? end - start : 0)
          .string(a.getOrDefault(GpuKernelRowEncoder.KIND, ""))
          .string(span.getName())
          .uint16(ints.getOrDefault(LlmlatAttributes.GPU_DEVICE, 0L).intValue())
          .uint32(ints.getOrDefault(LlmlatAttributes.GPU_STREAM, 0L))
          .int64(ints.getOrDefault(LlmlatAttributes.CUDA_CORRELATION_ID, 0L))
          .int64(ints.getOrDefault(LlmlatAttributes.GPU_BYTES, 0L))
          .string(resource.getOrDefault(LlmlatAttributes.HOST_NAME, ""))
          .uint32(ints.getOrDefault("process.pid", resourcePid))
          .uint32(ints.getOrDefault(LlmlatAttributes.THREAD_ID, 0L))
          .string(a.getOrDefault(LlmlatAttributes.STEP_SPAN_ID, ""))
          .string(a.getOrDefault(LlmlatAttributes.STEP_NAME, ""))
          .string(a.getOrDefault(LlmlatAttributes.GPU_SOURCE, ""))
          .string(a.getOrDefault(LlmlatAttributes.CLOCK_RULE, ""))
          .string(service)
          .string(resource.getOrDefault(SpanRouter.IMPORT_ID_ATTRIBUTE, ""));
    }

    static String hex(ByteString id) {
      return HexFormat.of().formatHex(id.toByteArray());
    }
  }

  /** A store that keeps what it is asked to insert. */
  static final class Captured implements ClickHouseStore {
    final Map<String, byte[]> rows = new LinkedHashMap<>();

    @Override
    public void insertRowBinary(
        String table, List<String> columns, byte[] data, String deduplicationToken) {
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      all.writeBytes(rows.getOrDefault(table, new byte[0]));
      all.writeBytes(data);
      rows.put(table, all.toByteArray());
    }

    @Override
    public void execute(String sql) {
      throw new UnsupportedOperationException(sql);
    }

    @Override
    public QueryResult query(String sql, Map<String, ?> params) {
      throw new UnsupportedOperationException(sql);
    }

    @Override
    public byte[] queryRowBinary(String sql, Map<String, ?> params) {
      throw new UnsupportedOperationException(sql);
    }

    @Override
    public String description() {
      return "captured rows";
    }

    @Override
    public void close() {}
  }
}
