package dev.llmlat.store.http;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Jetty's HTTP/1.1 connections with one deadline more: a request's line and headers must be in
 * within the header timeout from their first byte, or the connection is answered 408 and closed.
 * Jetty's idle timeout alone lets a client that sends one header byte now and then (slowloris) hold
 * a connection for ever.
 */
final class HeadDeadline extends HttpConnectionFactory {
  /**
   * After a 408, how long the connection still swallows what the client sends, so closing does not
   * reset the answer away.
   */
  private static final long LINGER_MILLIS = 2_000;

  private final Duration timeout;

  HeadDeadline(HttpConfiguration configuration, Duration timeout) {
    super(configuration);
    this.timeout = timeout;
  }

  @Override
  public Connection newConnection(Connector connector, EndPoint endPoint) {
    TimedConnection c =
        new TimedConnection(getHttpConfiguration(), connector, endPoint, connector.getScheduler());
    c.setTransferEncodingChunkMaxLength(getTransferEncodingChunkMaxLength());
    return configure(c, connector, endPoint);
  }

  private final class TimedConnection extends HttpConnection {
    private final Scheduler scheduler;

    /**
     * The pending deadline of the head being read; null between requests and once the head is in.
     */
    private final AtomicReference<Scheduler.Task> deadline = new AtomicReference<>();

    TimedConnection(
        HttpConfiguration configuration,
        Connector connector,
        EndPoint endPoint,
        Scheduler scheduler) {
      super(configuration, connector, endPoint);
      this.scheduler = scheduler;
    }

    @Override
    protected RequestHandler newRequestHandler() {
      return new RequestHandler() {
        @Override
        public void messageBegin() {
          super.messageBegin();
          Scheduler.Task[] task = new Scheduler.Task[1];
          task[0] =
              scheduler.schedule(() -> expire(task[0]), timeout.toNanos(), TimeUnit.NANOSECONDS);
          Scheduler.Task old = deadline.getAndSet(task[0]);
          if (old != null) {
            old.cancel();
          }
        }

        @Override
        public boolean headerComplete() {
          disarm();
          return super.headerComplete();
        }

        @Override
        public void badMessage(HttpException failure) {
          disarm();
          super.badMessage(failure);
        }
      };
    }

    private void disarm() {
      Scheduler.Task t = deadline.getAndSet(null);
      if (t != null) {
        t.cancel();
      }
    }

    /**
     * On the scheduler's thread: the head is still not in. Nothing else writes to the connection
     * before a head is complete.
     */
    private void expire(Scheduler.Task task) {
      if (!deadline.compareAndSet(task, null)) {
        return; // the head came in meanwhile
      }
      String reason =
          "Request Timeout: the request line and headers did not arrive within "
              + RequestBody.text(timeout)
              + "\n";
      byte[] body = reason.getBytes(StandardCharsets.UTF_8);
      byte[] head =
          ("HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: "
                  + body.length
                  + "\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1);
      EndPoint endPoint = getEndPoint();
      endPoint.write(
          Callback.from(
              () -> {
                endPoint.shutdownOutput();
                scheduler.schedule(endPoint::close, LINGER_MILLIS, TimeUnit.MILLISECONDS);
              },
              x -> endPoint.close(x)),
          ByteBuffer.wrap(head),
          ByteBuffer.wrap(body));
    }

    @Override
    public void onClose(Throwable cause) {
      disarm();
      super.onClose(cause);
    }
  }
}
