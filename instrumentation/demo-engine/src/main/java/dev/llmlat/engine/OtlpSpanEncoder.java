package dev.llmlat.engine;

import com.google.protobuf.ByteString;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * SDK {@link SpanData} to OTLP protobuf, split per trace the way the Collector's kafka exporter
 * does with {@code partition_traces_by_id: true}: one {@code ExportTraceServiceRequest} per trace
 * id (32 lowercase hex), spans grouped by resource and scope inside it.
 */
final class OtlpSpanEncoder {
  // Span.flags: bits 0-7 W3C trace flags, bit 8 "is_remote known", bit 9 "parent/link is remote".
  private static final int HAS_IS_REMOTE = 0x100;
  private static final int IS_REMOTE = 0x200;

  private OtlpSpanEncoder() {}

  static Map<String, ExportTraceServiceRequest> perTrace(Collection<SpanData> spans) {
    // trace -> resource -> scope -> spans, in arrival order.
    Map<String, Map<io.opentelemetry.sdk.resources.Resource, Map<InstrumentationScopeInfo, ScopeSpans.Builder>>> grouped =
        new LinkedHashMap<>();
    for (SpanData span : spans) {
      grouped.computeIfAbsent(span.getTraceId(), k -> new LinkedHashMap<>())
          .computeIfAbsent(span.getResource(), k -> new LinkedHashMap<>())
          .computeIfAbsent(span.getInstrumentationScopeInfo(), OtlpSpanEncoder::scopeSpans)
          .addSpans(span(span));
    }
    Map<String, ExportTraceServiceRequest> requests = new LinkedHashMap<>();
    grouped.forEach((traceId, byResource) -> {
      ExportTraceServiceRequest.Builder request = ExportTraceServiceRequest.newBuilder();
      byResource.forEach((resource, byScope) -> {
        ResourceSpans.Builder rs = ResourceSpans.newBuilder().setResource(resource(resource));
        if (resource.getSchemaUrl() != null) {
          rs.setSchemaUrl(resource.getSchemaUrl());
        }
        byScope.values().forEach(rs::addScopeSpans);
        request.addResourceSpans(rs);
      });
      requests.put(traceId, request.build());
    });
    return requests;
  }

  static Span span(SpanData s) {
    Span.Builder b = Span.newBuilder()
        .setTraceId(ByteString.copyFrom(s.getSpanContext().getTraceIdBytes()))
        .setSpanId(ByteString.copyFrom(s.getSpanContext().getSpanIdBytes()))
        .setName(s.getName())
        .setKind(kind(s.getKind()))
        .setStartTimeUnixNano(s.getStartEpochNanos())
        .setEndTimeUnixNano(s.getEndEpochNanos())
        .setFlags(flags(s.getSpanContext(), s.getParentSpanContext()))
        .setDroppedAttributesCount(s.getTotalAttributeCount() - s.getAttributes().size())
        .setDroppedEventsCount(s.getTotalRecordedEvents() - s.getEvents().size())
        .setDroppedLinksCount(s.getTotalRecordedLinks() - s.getLinks().size())
        .setStatus(status(s));
    String traceState = traceState(s.getSpanContext());
    if (!traceState.isEmpty()) {
      b.setTraceState(traceState);
    }
    if (s.getParentSpanContext().isValid()) {
      b.setParentSpanId(ByteString.copyFrom(s.getParentSpanContext().getSpanIdBytes()));
    }
    b.addAllAttributes(attributes(s.getAttributes()));
    for (EventData e : s.getEvents()) {
      b.addEvents(Span.Event.newBuilder()
          .setName(e.getName())
          .setTimeUnixNano(e.getEpochNanos())
          .addAllAttributes(attributes(e.getAttributes()))
          .setDroppedAttributesCount(e.getTotalAttributeCount() - e.getAttributes().size()));
    }
    for (LinkData l : s.getLinks()) {
      Span.Link.Builder link = Span.Link.newBuilder()
          .setTraceId(ByteString.copyFrom(l.getSpanContext().getTraceIdBytes()))
          .setSpanId(ByteString.copyFrom(l.getSpanContext().getSpanIdBytes()))
          .setFlags(flags(l.getSpanContext(), l.getSpanContext()))
          .addAllAttributes(attributes(l.getAttributes()))
          .setDroppedAttributesCount(l.getTotalAttributeCount() - l.getAttributes().size());
      String linkState = traceState(l.getSpanContext());
      if (!linkState.isEmpty()) {
        link.setTraceState(linkState);
      }
      b.addLinks(link);
    }
    return b.build();
  }

  static List<KeyValue> attributes(Attributes attributes) {
    List<KeyValue> out = new java.util.ArrayList<>(attributes.size());
    attributes.forEach((key, value) -> out.add(KeyValue.newBuilder().setKey(key.getKey()).setValue(value(key, value)).build()));
    return out;
  }

  private static AnyValue value(AttributeKey<?> key, Object value) {
    switch (key.getType()) {
      case STRING:
        return AnyValue.newBuilder().setStringValue((String) value).build();
      case BOOLEAN:
        return AnyValue.newBuilder().setBoolValue((Boolean) value).build();
      case LONG:
        return AnyValue.newBuilder().setIntValue((Long) value).build();
      case DOUBLE:
        return AnyValue.newBuilder().setDoubleValue((Double) value).build();
      case STRING_ARRAY:
      case BOOLEAN_ARRAY:
      case LONG_ARRAY:
      case DOUBLE_ARRAY:
        ArrayValue.Builder array = ArrayValue.newBuilder();
        for (Object element : (List<?>) value) {
          array.addValues(scalar(element));
        }
        return AnyValue.newBuilder().setArrayValue(array).build();
      default:
        return AnyValue.newBuilder().setStringValue(String.valueOf(value)).build();
    }
  }

  private static AnyValue scalar(Object element) {
    if (element instanceof Long) {
      return AnyValue.newBuilder().setIntValue((Long) element).build();
    }
    if (element instanceof Double) {
      return AnyValue.newBuilder().setDoubleValue((Double) element).build();
    }
    if (element instanceof Boolean) {
      return AnyValue.newBuilder().setBoolValue((Boolean) element).build();
    }
    return AnyValue.newBuilder().setStringValue(String.valueOf(element)).build();
  }

  private static Resource resource(io.opentelemetry.sdk.resources.Resource resource) {
    return Resource.newBuilder().addAllAttributes(attributes(resource.getAttributes())).build();
  }

  private static ScopeSpans.Builder scopeSpans(InstrumentationScopeInfo scope) {
    InstrumentationScope.Builder s = InstrumentationScope.newBuilder().setName(scope.getName())
        .addAllAttributes(attributes(scope.getAttributes()));
    if (scope.getVersion() != null) {
      s.setVersion(scope.getVersion());
    }
    ScopeSpans.Builder ss = ScopeSpans.newBuilder().setScope(s);
    if (scope.getSchemaUrl() != null) {
      ss.setSchemaUrl(scope.getSchemaUrl());
    }
    return ss;
  }

  private static Span.SpanKind kind(io.opentelemetry.api.trace.SpanKind kind) {
    switch (kind) {
      case SERVER:
        return Span.SpanKind.SPAN_KIND_SERVER;
      case CLIENT:
        return Span.SpanKind.SPAN_KIND_CLIENT;
      case PRODUCER:
        return Span.SpanKind.SPAN_KIND_PRODUCER;
      case CONSUMER:
        return Span.SpanKind.SPAN_KIND_CONSUMER;
      default:
        return Span.SpanKind.SPAN_KIND_INTERNAL;
    }
  }

  private static Status status(SpanData s) {
    Status.Builder status = Status.newBuilder();
    StatusCode code = s.getStatus().getStatusCode();
    status.setCode(code == StatusCode.ERROR ? Status.StatusCode.STATUS_CODE_ERROR
        : code == StatusCode.OK ? Status.StatusCode.STATUS_CODE_OK : Status.StatusCode.STATUS_CODE_UNSET);
    if (!s.getStatus().getDescription().isEmpty()) {
      status.setMessage(s.getStatus().getDescription());
    }
    return status.build();
  }

  private static int flags(SpanContext own, SpanContext remoteness) {
    return (own.getTraceFlags().asByte() & 0xff) | HAS_IS_REMOTE | (remoteness.isRemote() ? IS_REMOTE : 0);
  }

  private static String traceState(SpanContext context) {
    StringBuilder text = new StringBuilder();
    context.getTraceState().forEach((k, v) -> text.append(text.length() == 0 ? "" : ",").append(k).append('=').append(v));
    return text.toString();
  }
}
