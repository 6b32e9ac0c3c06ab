package dev.llmlat.store.internal;

import java.lang.foreign.MemorySegment;

/**
 * A query whose result arrives chunk by chunk ({@code chdb_stream_query}). Its connection runs
 * nothing else until the stream is closed; fetch and cancel from the thread that reads it (the
 * engine does not allow them concurrently on one connection).
 */
public final class ResultStream implements AutoCloseable {
  private final ChdbConnection connection;
  private MemorySegment stream;
  private boolean ended;

  ResultStream(ChdbConnection connection, MemorySegment stream) {
    this.connection = connection;
    this.stream = stream;
  }

  /** The next chunk, or null when the result has ended. */
  public NativeResult next() throws ChdbConnection.QueryFailure {
    if (ended) {
      return null;
    }
    NativeResult chunk;
    try {
      chunk = connection.fetch(stream);
    } catch (ChdbConnection.QueryFailure e) {
      if (e.getMessage().contains("No active streaming query")) {
        ended = true; // chDB 26.5 says so instead of an empty chunk when a result has no rows
        return null;
      }
      throw e;
    }
    if (chunk.length() == 0) {
      chunk.close();
      ended = true;
      return null;
    }
    return chunk;
  }

  /** Stops the query in the engine; the stream is closed afterwards either way. */
  public void cancel() {
    if (!ended && stream != null) {
      connection.cancel(stream);
      ended = true;
    }
  }

  @Override
  public void close() {
    if (stream != null) {
      connection.destroy(stream);
      stream = null;
    }
  }
}
