package dev.llmlat.store.internal;

import dev.llmlat.store.StoreException;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One result (or one streamed chunk) as the engine made it, still in native memory: written out in
 * slices rather than copied whole onto the Java heap. Close it to free the engine's buffer.
 */
public final class NativeResult implements AutoCloseable {
  private static final int SLICE = 64 * 1024;

  private final ChdbLibrary lib;
  private MemorySegment result; // chdb_result*
  private final MemorySegment buffer;
  private final long length;
  private final Stats stats;

  /** What the engine counted for the query: ClickHouse's X-ClickHouse-Summary fields. */
  public record Stats(
      long readRows,
      long readBytes,
      long writtenRows,
      long writtenBytes,
      long resultRows,
      long resultBytes,
      double elapsedSeconds) {
    public static final Stats NONE = new Stats(0, 0, 0, 0, 0, 0, 0);

    public Stats plus(Stats o) {
      return new Stats(
          readRows + o.readRows,
          readBytes + o.readBytes,
          writtenRows + o.writtenRows,
          writtenBytes + o.writtenBytes,
          resultRows + o.resultRows,
          resultBytes + o.resultBytes,
          Math.max(elapsedSeconds, o.elapsedSeconds));
    }
  }

  private NativeResult(
      ChdbLibrary lib, MemorySegment result, MemorySegment buffer, long length, Stats stats) {
    this.lib = lib;
    this.result = result;
    this.buffer = buffer;
    this.length = length;
    this.stats = stats;
  }

  /** Wraps {@code result}, or frees it and throws the engine's error. */
  static NativeResult checked(ChdbLibrary lib, MemorySegment result) throws Throwable {
    if (result.address() == 0) {
      throw new ChdbConnection.QueryFailure(
          "Code: 1000. DB::Exception: chDB returned no result. (UNKNOWN_EXCEPTION)");
    }
    try {
      String error = error(lib, result);
      if (error != null) {
        throw new ChdbConnection.QueryFailure(error);
      }
      long length = (long) lib.resultLength.invokeExact(result);
      MemorySegment buffer =
          length == 0
              ? MemorySegment.NULL
              : ((MemorySegment) lib.resultBuffer.invokeExact(result)).reinterpret(length);
      Stats stats =
          new Stats(
              (long) lib.resultStorageRowsRead.invokeExact(result),
              (long) lib.resultStorageBytesRead.invokeExact(result),
              (long) lib.resultRowsWritten.invokeExact(result),
              (long) lib.resultBytesWritten.invokeExact(result),
              (long) lib.resultRowsRead.invokeExact(result),
              length,
              (double) lib.resultElapsed.invokeExact(result));
      return new NativeResult(lib, result, buffer, length, stats);
    } catch (Throwable t) {
      lib.destroyQueryResult(result);
      throw t;
    }
  }

  /** The engine's error message for {@code result}, or null. */
  static String error(ChdbLibrary lib, MemorySegment result) throws Throwable {
    MemorySegment error = (MemorySegment) lib.resultError.invokeExact(result);
    return error.address() == 0 ? null : error.reinterpret(Integer.MAX_VALUE).getString(0).strip();
  }

  public long length() {
    return length;
  }

  public Stats stats() {
    return stats;
  }

  /** The bytes, copied onto the heap: for small results. */
  public byte[] bytes() {
    return length == 0 ? new byte[0] : buffer.toArray(ValueLayout.JAVA_BYTE);
  }

  /** Writes bytes {@code from} (inclusive) to the end. */
  public void writeTo(OutputStream out, long from) throws IOException {
    byte[] slice = new byte[(int) Math.min(SLICE, Math.max(0, length - from))];
    for (long at = from; at < length; at += slice.length) {
      int n = (int) Math.min(slice.length, length - at);
      MemorySegment.copy(buffer, ValueLayout.JAVA_BYTE, at, slice, 0, n);
      out.write(slice, 0, n);
    }
  }

  public void writeTo(OutputStream out) throws IOException {
    writeTo(out, 0);
  }

  /** The bytes as a stream, read in slices from native memory; closing it frees the result. */
  public java.io.InputStream inputStream() {
    return new java.io.InputStream() {
      private long at;

      @Override
      public int read() {
        return at < length ? buffer.get(ValueLayout.JAVA_BYTE, at++) & 0xff : -1;
      }

      @Override
      public int read(byte[] b, int off, int len) {
        if (len == 0) {
          return 0;
        }
        if (at >= length) {
          return -1;
        }
        int n = (int) Math.min(len, length - at);
        MemorySegment.copy(buffer, ValueLayout.JAVA_BYTE, at, b, off, n);
        at += n;
        return n;
      }

      @Override
      public int available() {
        return (int) Math.min(Integer.MAX_VALUE, length - at);
      }

      @Override
      public void close() {
        NativeResult.this.close();
      }
    };
  }

  /** The byte at {@code index}. */
  public byte byteAt(long index) {
    return buffer.get(ValueLayout.JAVA_BYTE, index);
  }

  @Override
  public void close() {
    if (result == null) {
      return;
    }
    try {
      lib.destroyQueryResult(result);
    } catch (Throwable t) {
      throw new StoreException("chdb_destroy_query_result failed: " + t, t);
    } finally {
      result = null;
    }
  }
}
