package dev.llmlat.otlpkafka.internal;

import io.opentelemetry.exporter.internal.otlp.traces.LowAllocationTraceRequestMarshaler;
import io.opentelemetry.exporter.internal.otlp.traces.TraceRequestMarshaler;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Collection;

/**
 * Encodes spans as one OTLP {@code ExportTraceServiceRequest} protobuf, with the SDK's own OTLP
 * marshalers (inside the agent), so the bytes are exactly what its OTLP exporter would send.
 *
 * <p>An instance reuses the SDK's low-allocation marshaler (the one its OTLP exporters use with
 * {@code memory_mode=reusable_data}) and writes straight into the exact-size record array: one
 * instance per thread (the exporter's sender thread), not thread-safe.
 */
public final class TraceRecordEncoder {
  private final LowAllocationTraceRequestMarshaler marshaler = new LowAllocationTraceRequestMarshaler();

  public TraceRecordEncoder() {}

  /** Encodes with a fresh marshaler (thread-safe, allocates more). */
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

  /** Encodes with this encoder's reusable marshaler. */
  public byte[] encodeReusing(Collection<SpanData> spans) {
    marshaler.initialize(spans);
    try {
      byte[] value = new byte[marshaler.getBinarySerializedSize()];
      ArrayOut out = new ArrayOut(value);
      marshaler.writeBinaryTo(out);
      if (out.position != value.length) {
        throw new IllegalStateException("OTLP size " + value.length + " but wrote " + out.position);
      }
      return value;
    } catch (IOException e) {
      throw new UncheckedIOException(e); // an array does not throw
    } finally {
      marshaler.reset();
    }
  }

  /** Writes into a preallocated array of the exact serialized size: no growth, no final copy. */
  private static final class ArrayOut extends OutputStream {
    private final byte[] array;
    private int position;

    ArrayOut(byte[] array) {
      this.array = array;
    }

    @Override
    public void write(int b) {
      array[position++] = (byte) b;
    }

    @Override
    public void write(byte[] bytes, int offset, int length) {
      System.arraycopy(bytes, offset, array, position, length);
      position += length;
    }
  }
}
