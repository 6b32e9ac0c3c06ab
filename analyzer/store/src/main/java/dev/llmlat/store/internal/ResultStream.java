package dev.llmlat.store.internal;

import dev.llmlat.store.StoreException;
import java.lang.foreign.MemorySegment;

/**
 * A query whose result arrives chunk by chunk ({@code chdb_stream_query}). Its connection runs
 * nothing else until the stream is closed; fetch and cancel from the thread that reads it (the
 * engine does not allow them concurrently on one connection). Should the connection close first
 * (the process exiting on a signal), it cancels the query and frees the stream itself.
 */
public final class ResultStream implements AutoCloseable {
  private final ChdbConnection connection;
  private MemorySegment stream; // guarded by connection
  private boolean ended; // guarded by connection
  private boolean abandoned; // guarded by connection

  ResultStream(ChdbConnection connection, MemorySegment stream) {
    this.connection = connection;
    this.stream = stream;
  }

  /** The next chunk, or null when the result has ended. */
  public NativeResult next() throws ChdbConnection.QueryFailure {
    synchronized (connection) {
      if (abandoned) {
        throw new StoreException("the embedded store closed while a result was being read");
      }
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
  }

  /** Stops the query in the engine; the stream is closed afterwards either way. */
  public void cancel() {
    synchronized (connection) {
      if (!ended && stream != null) {
        connection.cancel(stream);
        ended = true;
      }
    }
  }

  /** The connection closes under the stream: the query is cancelled and the stream freed. */
  void abandon() {
    synchronized (connection) {
      try {
        cancel();
        close();
      } finally {
        abandoned = true;
      }
    }
  }

  /**
   * Frees the stream; a result not read to its end is cancelled first, since a stream freed while
   * its query still runs leaves the engine refusing the next query on any connection.
   */
  @Override
  public void close() {
    synchronized (connection) {
      if (stream != null) {
        try {
          cancel();
        } finally {
          destroyStream();
        }
      }
    }
  }

  private void destroyStream() {
    try {
      connection.destroy(stream);
    } finally {
      stream = null;
      connection.streamClosed(this);
    }
  }
}
