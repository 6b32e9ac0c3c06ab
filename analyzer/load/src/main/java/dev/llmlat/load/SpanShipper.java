package dev.llmlat.load;

import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.otlpkafka.SpanSink;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hands client spans to a {@link SpanSink} as requests complete, in bounded batches (up to {@value
 * #BATCH} spans, or what gathered within {@value #LINGER_MS} ms), on a thread of its own: a slow or
 * failing sink never holds up a request. The queue is bounded; a span that finds it full is dropped
 * and counted, as is everything after the sink failed once (the run goes on; the summary says what
 * was not shipped).
 */
public final class SpanShipper implements AutoCloseable {
  static final int BATCH = 512;
  static final int LINGER_MS = 200;
  private static final int QUEUE = 65_536;
  private static final Span END = Span.getDefaultInstance();

  private final SpanSink sink;
  private final BlockingQueue<Span> queue = new ArrayBlockingQueue<>(QUEUE);
  private final AtomicLong shipped = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final Thread thread;
  private volatile Resource resource = Resource.getDefaultInstance();
  private volatile RuntimeException failure;

  public SpanShipper(SpanSink sink) {
    this.sink = sink;
    this.thread = new Thread(this::run, "llmlat-load-spans");
    thread.setDaemon(true);
    thread.start();
  }

  /** The resource every batch carries (set once, before the first span). */
  void resource(Resource resource) {
    this.resource = resource;
  }

  /** Queues a span; never blocks. */
  void add(Span span) {
    if (failure != null || !queue.offer(span)) {
      dropped.incrementAndGet();
    }
  }

  private void run() {
    List<Span> batch = new ArrayList<>(BATCH);
    try {
      while (true) {
        Span first = queue.take();
        if (first == END) {
          return;
        }
        batch.add(first);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LINGER_MS);
        boolean end = false;
        while (batch.size() < BATCH) {
          Span next = queue.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
          if (next == null) {
            break;
          }
          if (next == END) {
            end = true;
            break;
          }
          batch.add(next);
        }
        ship(batch);
        batch.clear();
        if (end) {
          return;
        }
      }
    } catch (InterruptedException e) {
      dropped.addAndGet(batch.size() + queue.size());
    }
  }

  private void ship(List<Span> spans) {
    if (failure != null) {
      dropped.addAndGet(spans.size());
      return;
    }
    ExportTraceServiceRequest request =
        ExportTraceServiceRequest.newBuilder()
            .addResourceSpans(
                ResourceSpans.newBuilder()
                    .setResource(resource)
                    .addScopeSpans(
                        ScopeSpans.newBuilder().setScope(ClientSpans.SCOPE).addAllSpans(spans)))
            .build();
    try {
      sink.accept(SpanBatch.of(request));
      shipped.addAndGet(spans.size());
    } catch (RuntimeException e) {
      failure = e;
      dropped.addAndGet(spans.size());
    }
  }

  /** Spans handed to the sink. */
  public long shipped() {
    return shipped.get();
  }

  /** Spans not handed to the sink: the queue was full, the sink had failed, or it was stopped. */
  public long dropped() {
    return dropped.get();
  }

  /** Why the sink stopped taking spans; null while it takes them. */
  public RuntimeException failure() {
    return failure;
  }

  /** Ships what is queued and stops; waits for that at most {@code timeoutMs}. */
  public void close(long timeoutMs) {
    while (!queue.offer(END)) {
      queue.poll(); // full: the oldest span gives way for the end (counted)
      dropped.incrementAndGet();
    }
    try {
      thread.join(timeoutMs);
      if (thread.isAlive()) {
        thread.interrupt();
        thread.join(1000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    close(60_000);
  }
}
