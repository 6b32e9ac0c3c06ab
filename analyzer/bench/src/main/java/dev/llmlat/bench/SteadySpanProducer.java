package dev.llmlat.bench;

import com.google.protobuf.ByteString;
import dev.llmlat.demo.DemoTraces;
import dev.llmlat.otlpkafka.SpanPublisher;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes the demo's three-layer request traces at a steady rate (spans per second, paced every
 * 100 ms), plus one marker span per tick whose end is the moment it was sent: the store's reader
 * measures end-to-end lag from the markers.
 */
final class SteadySpanProducer implements AutoCloseable {
  static final String MARKER_SERVICE = "llmlat-soak";
  static final String MARKER_SPAN = "soak.marker";
  private static final long TICK_NANOS = 100_000_000L;
  private static final int REQUESTS_PER_BATCH = 10;

  private final SpanPublisher publisher;
  private final int spansPerSecond;
  private final AtomicLong sent = new AtomicLong();
  private final Queue<Long> markerEnds = new ConcurrentLinkedQueue<>();
  private final Thread thread;
  private volatile boolean running = true;
  private volatile Throwable failure;

  SteadySpanProducer(String bootstrapServers, String topic, int spansPerSecond) {
    this.publisher = new SpanPublisher(bootstrapServers, topic);
    this.spansPerSecond = spansPerSecond;
    this.thread = Thread.ofPlatform().name("soak-producer").start(this::run);
  }

  long sent() {
    return sent.get();
  }

  /** The end times (Unix ns, distinct) of the markers sent and not yet taken. */
  Queue<Long> markerEnds() {
    return markerEnds;
  }

  /** The error that stopped production, if one did. */
  Throwable failure() {
    return failure;
  }

  private void run() {
    long start = System.nanoTime();
    long seed = 1;
    long lastMarkerEnd = 0;
    List<DemoTraces.Request> generated = new ArrayList<>();
    try {
      for (long tick = 1; running; tick++) {
        long due = (long) (spansPerSecond * ((System.nanoTime() - start) / 1e9));
        while (sent.get() < due) {
          generated.clear();
          // requests that began 2 s ago and have ended by now, as an exporter would send them
          ExportTraceServiceRequest batch =
              new DemoTraces(seed++, System.currentTimeMillis() * 1_000_000L - 2_000_000_000L)
                  .generate(REQUESTS_PER_BATCH, generated);
          publisher.publish(batch);
          sent.addAndGet(SpanPublisher.spanCount(batch));
        }
        long markerEnd = Math.max(System.currentTimeMillis() * 1_000_000L, lastMarkerEnd + 1);
        publisher.publish(marker(markerEnd));
        markerEnds.add(markerEnd);
        lastMarkerEnd = markerEnd;
        sent.incrementAndGet();
        publisher.flush();
        long sleep = start + tick * TICK_NANOS - System.nanoTime();
        if (sleep > 0) {
          Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      failure = e;
    }
  }

  private static ExportTraceServiceRequest marker(long endUnixNanos) {
    byte[] trace = new byte[16];
    byte[] span = new byte[8];
    ThreadLocalRandom.current().nextBytes(trace);
    ThreadLocalRandom.current().nextBytes(span);
    return ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(
            ResourceSpans.newBuilder()
                .setResource(
                    Resource.newBuilder()
                        .addAttributes(
                            KeyValue.newBuilder()
                                .setKey("service.name")
                                .setValue(AnyValue.newBuilder().setStringValue(MARKER_SERVICE))))
                .addScopeSpans(
                    ScopeSpans.newBuilder()
                        .addSpans(
                            Span.newBuilder()
                                .setTraceId(ByteString.copyFrom(trace))
                                .setSpanId(ByteString.copyFrom(span))
                                .setName(MARKER_SPAN)
                                .setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
                                .setStartTimeUnixNano(endUnixNanos - 1_000_000L)
                                .setEndTimeUnixNano(endUnixNanos))))
        .build();
  }

  /** Stops producing; everything sent so far is acknowledged by the broker. */
  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.join();
    try {
      publisher.flush();
    } finally {
      publisher.close();
    }
  }
}
