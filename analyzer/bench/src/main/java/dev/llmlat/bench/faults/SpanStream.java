package dev.llmlat.bench.faults;

import dev.llmlat.demo.DemoTraces;
import dev.llmlat.otlpkafka.SpanPublisher;
import dev.llmlat.semconv.LlmlatTopics;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.util.ArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Publishes generated three-layer traces (the demo's generator, random 64-bit span ids) to the span
 * topic on a thread of its own, as a live service would, until {@code spans} spans are
 * acknowledged.
 */
final class SpanStream implements AutoCloseable {
  private final Thread thread;
  private final AtomicLong acknowledged = new AtomicLong();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();

  /** {@code spansPerSecond} 0: as fast as the broker takes them. */
  SpanStream(String bootstrap, long spans, long seed, double spansPerSecond) {
    thread =
        new Thread(
            () -> {
              DemoTraces traces = new DemoTraces(seed, 1_795_946_400_000_000_000L);
              long t0 = System.nanoTime();
              try (SpanPublisher publisher = new SpanPublisher(bootstrap, LlmlatTopics.SPANS)) {
                long sent = 0;
                while (sent < spans && !Thread.currentThread().isInterrupted()) {
                  ExportTraceServiceRequest batch = traces.generate(20, new ArrayList<>());
                  publisher.publish(batch);
                  publisher.flush();
                  sent += spanCount(batch);
                  acknowledged.set(sent);
                  if (spansPerSecond > 0) {
                    long due = t0 + (long) (sent / spansPerSecond * 1e9);
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                      Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                  }
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } catch (Throwable t) {
                failure.set(t);
              }
            },
            "faults-span-stream");
    thread.setDaemon(true);
    thread.start();
  }

  static long spanCount(ExportTraceServiceRequest batch) {
    return batch.getResourceSpansList().stream()
        .flatMap(r -> r.getScopeSpansList().stream())
        .mapToLong(s -> s.getSpansCount())
        .sum();
  }

  /** Spans the broker acknowledged so far. */
  long acknowledged() {
    return acknowledged.get();
  }

  boolean done() {
    return !thread.isAlive();
  }

  /** Waits for the stream to end; returns the spans acknowledged, or throws what stopped it. */
  long await() throws InterruptedException {
    thread.join();
    if (failure.get() != null) {
      throw new IllegalStateException("publishing spans failed: " + failure.get(), failure.get());
    }
    return acknowledged.get();
  }

  @Override
  public void close() throws InterruptedException {
    thread.interrupt();
    thread.join(30_000);
  }
}
