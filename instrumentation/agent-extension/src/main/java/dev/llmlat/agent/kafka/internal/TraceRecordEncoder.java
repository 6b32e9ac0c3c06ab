package dev.llmlat.agent.kafka.internal;

import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;

/**
 * Encodes spans as one OTLP {@code ExportTraceServiceRequest} protobuf, with the SDK's own OTLP
 * marshaler (inside the agent), so the bytes are exactly what its OTLP exporter would send.
 */
public final class TraceRecordEncoder {
  private TraceRecordEncoder() {}

  public static byte[] encode(Collection<SpanData> spans) {
    TraceRequestMarshaler marshaler = TraceRequestMarshaler.create(spans);
    ByteArrayOutputStream out = new ByteArrayOutputStream(marshaler.getBinarySerializedSize());
    try {
      marshaler.writeBinaryTo(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a ByteArrayOutputStream does not throw
    }
    return out.toByteArray();
  }
}
