package dev.llmlat.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.store.ClickHouseStore;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.common.v1.KeyValueList;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import java.util.HexFormat;
import java.util.List;

/** Spans that exercise every stored field, and the assertion that they were stored exactly. */
public final class SpanFixtures {
  private SpanFixtures() {}

  public static final String TRACE = "5b8efff798038103d269b633813fc60c";
  public static final String SPAN = "eee19b7ec3c1b174";
  public static final String PARENT = "eee19b7ec3c1b173";
  public static final String LINK_TRACE = "0af7651916cd43dd8448eb211c80319c";
  public static final String LINK_SPAN = "b7ad6b7169203331";

  /** A span that uses every field the table stores, with nanosecond precision everywhere. */
  public static ExportTraceServiceRequest everyField() {
    Span span =
        Span.newBuilder()
            .setTraceId(id(TRACE))
            .setSpanId(id(SPAN))
            .setParentSpanId(id(PARENT))
            .setTraceState("vendor=x")
            .setName("prefill")
            .setKind(Span.SpanKind.SPAN_KIND_CLIENT)
            .setStartTimeUnixNano(1_795_946_400_123_456_789L)
            .setEndTimeUnixNano(1_795_946_400_223_456_790L)
            .addAttributes(kv("s", AnyValue.newBuilder().setStringValue("tab\tand\nnewline")))
            .addAttributes(kv("i", AnyValue.newBuilder().setIntValue(-42)))
            .addAttributes(kv("d", AnyValue.newBuilder().setDoubleValue(0.25)))
            .addAttributes(kv("d1", AnyValue.newBuilder().setDoubleValue(3.0)))
            .addAttributes(kv("b", AnyValue.newBuilder().setBoolValue(true)))
            .addAttributes(
                kv("bytes", AnyValue.newBuilder().setBytesValue(ByteString.copyFromUtf8("hi"))))
            .addAttributes(
                kv(
                    "arr",
                    AnyValue.newBuilder()
                        .setArrayValue(
                            ArrayValue.newBuilder()
                                .addValues(AnyValue.newBuilder().setStringValue("a"))
                                .addValues(AnyValue.newBuilder().setIntValue(2)))))
            .addAttributes(
                kv(
                    "kv",
                    AnyValue.newBuilder()
                        .setKvlistValue(
                            KeyValueList.newBuilder()
                                .addValues(kv("k", AnyValue.newBuilder().setBoolValue(false))))))
            .addEvents(
                Span.Event.newBuilder()
                    .setTimeUnixNano(1_795_946_400_150_000_001L)
                    .setName("first_token")
                    .addAttributes(kv("n", AnyValue.newBuilder().setIntValue(1))))
            .addEvents(
                Span.Event.newBuilder()
                    .setTimeUnixNano(1_795_946_400_160_000_002L)
                    .setName("second"))
            .addLinks(
                Span.Link.newBuilder()
                    .setTraceId(id(LINK_TRACE))
                    .setSpanId(id(LINK_SPAN))
                    .setTraceState("t=1")
                    .addAttributes(kv("role", AnyValue.newBuilder().setStringValue("batch"))))
            .setStatus(
                Status.newBuilder().setCode(Status.StatusCode.STATUS_CODE_ERROR).setMessage("oom"))
            .build();
    return ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(
            ResourceSpans.newBuilder()
                .setResource(
                    Resource.newBuilder()
                        .addAttributes(
                            kv("service.name", AnyValue.newBuilder().setStringValue("engine")))
                        .addAttributes(
                            kv(
                                LlmlatAttributes.LAYER,
                                AnyValue.newBuilder().setStringValue("engine"))))
                .addScopeSpans(
                    ScopeSpans.newBuilder()
                        .setScope(
                            InstrumentationScope.newBuilder()
                                .setName("dev.llmlat.scheduler")
                                .setVersion("1.2"))
                        .addSpans(span)))
        .build();
  }

  public static ByteString id(String hex) {
    return ByteString.copyFrom(HexFormat.of().parseHex(hex));
  }

  public static KeyValue kv(String key, AnyValue.Builder value) {
    return KeyValue.newBuilder().setKey(key).setValue(value).build();
  }

  /** Asserts that {@link #everyField()} landed in {@code store} field for field. */
  public static void assertEveryFieldStored(ClickHouseStore store) {
    List<String> row =
        store
            .query(
                "SELECT toUnixTimestamp64Nano(Timestamp), TraceId, SpanId, ParentSpanId, TraceState, SpanName, SpanKind,"
                    + " ServiceName, ResourceAttributes['llmlat.layer'], ScopeName, ScopeVersion, Duration, StatusCode, StatusMessage,"
                    + " SpanAttributes['s'], SpanAttributes['i'], SpanAttributes['d'], SpanAttributes['d1'], SpanAttributes['b'],"
                    + " SpanAttributes['bytes'], SpanAttributes['arr'], SpanAttributes['kv'],"
                    + " arrayMap(t -> toUnixTimestamp64Nano(t), Events.Timestamp), Events.Name, Events.Attributes[1]['n'],"
                    + " Links.TraceId, Links.SpanId, Links.TraceState, Links.Attributes[1]['role'], length(mapKeys(SpanAttributes))"
                    + " FROM otel_traces WHERE TraceId = '"
                    + TRACE
                    + "'")
            .rows()
            .get(0);
    assertThat(row)
        .containsExactly(
            "1795946400123456789",
            TRACE,
            SPAN,
            PARENT,
            "vendor=x",
            "prefill",
            "Client",
            "engine",
            "engine",
            "dev.llmlat.scheduler",
            "1.2",
            "100000001",
            "Error",
            "oom",
            "tab\tand\nnewline",
            "-42",
            "0.25",
            "3",
            "true",
            "aGk=",
            "[\"a\",2]",
            "{\"k\":false}",
            "[1795946400150000001,1795946400160000002]",
            "['first_token','second']",
            "1",
            "['" + LINK_TRACE + "']",
            "['" + LINK_SPAN + "']",
            "['t=1']",
            "batch",
            "8");
  }

  /** One span of its own trace (ids from {@code i}), encoded as a span topic record. */
  public static byte[] oneSpan(int i) {
    byte[] trace = new byte[16];
    trace[0] = 1;
    trace[15] = (byte) i;
    trace[14] = (byte) (i >> 8);
    byte[] span = new byte[8];
    span[7] = (byte) i;
    span[6] = (byte) (i >> 8);
    span[0] = 1;
    return ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(
            ResourceSpans.newBuilder()
                .addScopeSpans(
                    ScopeSpans.newBuilder()
                        .addSpans(
                            Span.newBuilder()
                                .setTraceId(ByteString.copyFrom(trace))
                                .setSpanId(ByteString.copyFrom(span))
                                .setName("s" + i)
                                .setStartTimeUnixNano(1_795_946_400_000_000_000L + i)
                                .setEndTimeUnixNano(1_795_946_400_000_001_000L + i))))
        .build()
        .toByteArray();
  }
}
