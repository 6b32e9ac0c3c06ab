package dev.llmlat.store.http;

import java.nio.ByteBuffer;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Executor;
import org.eclipse.jetty.io.AbstractEndPoint;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;

/**
 * Notices a client that closes its connection while its query runs, so the query is killed. Jetty
 * reads nothing from an HTTP/1.1 connection while a request is being handled, so once the body is
 * in, this asks the connection's end point to say when it is readable: an end of stream means the
 * client left; bytes (a pipelined next request) go back to the connection, which parses them after
 * this answer, and then the client is plainly still there.
 */
final class ClientWatch implements Callback {
  private final EndPoint endPoint;
  private final Connection connection;
  private final Executor executor;
  private Runnable onGone; // guarded by this; null once stopped or fired

  ClientWatch(EndPoint endPoint, Connection connection, Executor executor) {
    this.endPoint = endPoint;
    this.connection = connection;
    this.executor = executor;
  }

  /** Runs {@code gone} (on another thread) if the client leaves before {@link #stop()}. */
  synchronized void start(Runnable gone) {
    onGone = gone;
    if (!endPoint.tryFillInterested(this)) {
      onGone = null; // someone reads already: Jetty will see the end itself
    }
  }

  /** The answer is done: Jetty reads the connection again, so no read of ours may be pending. */
  synchronized void stop() {
    onGone = null;
    if (endPoint.isFillInterested() && endPoint instanceof AbstractEndPoint ep) {
      ep.getFillInterest().onFail(new CancellationException("the answer is complete"));
    }
  }

  @Override
  public synchronized void succeeded() {
    if (onGone == null) {
      return;
    }
    ByteBuffer buffer = BufferUtil.allocate(4096);
    int n;
    try {
      n = endPoint.fill(buffer);
    } catch (java.io.IOException broken) {
      n = -1;
    }
    if (n < 0) {
      gone();
    } else if (n > 0) {
      onGone = null;
      if (connection instanceof Connection.UpgradeTo to) {
        to.onUpgradeTo(buffer); // the connection's own input buffer: parsed as the next request
      }
    } else if (!endPoint.tryFillInterested(this)) {
      onGone = null;
    }
  }

  @Override
  public synchronized void failed(Throwable x) {
    if (onGone != null && !(x instanceof CancellationException)) {
      gone();
    }
  }

  private void gone() {
    Runnable r = onGone;
    onGone = null;
    executor.execute(r); // killing a query runs an engine statement: not on Jetty's selector
  }
}
