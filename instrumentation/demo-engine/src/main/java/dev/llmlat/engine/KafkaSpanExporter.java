package dev.llmlat.engine;

import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes spans to the llmlat span topic (schemas/kafka/README.md): one record per trace, key the
 * trace id in lowercase hex, value an OTLP {@code ExportTraceServiceRequest}. Put it behind a
 * {@code BatchSpanProcessor}: its bounded queue keeps the scheduler from ever waiting on Kafka
 * (spans past it are dropped and counted by the SDK); this exporter only waits for the producer's
 * buffer ({@code max.block.ms}, kept short).
 */
public final class KafkaSpanExporter implements SpanExporter {
  private static final Logger LOG = Logger.getLogger(KafkaSpanExporter.class.getName());

  private final Producer<String, byte[]> producer;
  private final String topic;
  private final AtomicLong recordsSent = new AtomicLong();
  private final AtomicLong recordsFailed = new AtomicLong();
  private volatile boolean shutdown;

  /** Uses {@code producer} (e.g. a {@code MockProducer} in tests); closes it on shutdown. */
  public KafkaSpanExporter(Producer<String, byte[]> producer, String topic) {
    this.producer = producer;
    this.topic = topic;
  }

  public static KafkaSpanExporter create(String bootstrapServers, String topic) {
    return create(bootstrapServers, topic, Map.of());
  }

  /** With the user's producer settings (security) over the defaults; their values are never logged. */
  public static KafkaSpanExporter create(String bootstrapServers, String topic, Map<String, String> properties) {
    Map<String, Object> p = new HashMap<>();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "llmlat-demo-engine");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    // Short: a missing broker must cost the export thread seconds, not the default minute.
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 2_000);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    p.putAll(properties);
    return new KafkaSpanExporter(new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer()), topic);
  }

  @Override
  public CompletableResultCode export(Collection<SpanData> spans) {
    if (shutdown) {
      return CompletableResultCode.ofFailure();
    }
    Map<String, ExportTraceServiceRequest> perTrace = OtlpSpanEncoder.perTrace(spans);
    CompletableResultCode result = new CompletableResultCode();
    AtomicInteger pending = new AtomicInteger(perTrace.size());
    AtomicInteger failed = new AtomicInteger();
    if (perTrace.isEmpty()) {
      return CompletableResultCode.ofSuccess();
    }
    perTrace.forEach((traceId, request) -> {
      try {
        producer.send(new ProducerRecord<>(topic, traceId, request.toByteArray()), (metadata, error) -> {
          if (error != null) {
            failed.incrementAndGet();
            recordsFailed.incrementAndGet();
            LOG.log(Level.WARNING, "span record for trace " + traceId + " not written to " + topic + ": " + error);
          } else {
            recordsSent.incrementAndGet();
          }
          if (pending.decrementAndGet() == 0) {
            if (failed.get() == 0) {
              result.succeed();
            } else {
              result.fail();
            }
          }
        });
      } catch (RuntimeException e) { // buffer full past max.block.ms, producer closed, ...
        failed.incrementAndGet();
        recordsFailed.incrementAndGet();
        LOG.log(Level.WARNING, "span record for trace " + traceId + " not sent to " + topic + ": " + e);
        if (pending.decrementAndGet() == 0) {
          result.fail();
        }
      }
    });
    return result;
  }

  public long recordsSent() {
    return recordsSent.get();
  }

  public long recordsFailed() {
    return recordsFailed.get();
  }

  @Override
  public CompletableResultCode flush() {
    producer.flush();
    return CompletableResultCode.ofSuccess();
  }

  @Override
  public CompletableResultCode shutdown() {
    if (shutdown) {
      return CompletableResultCode.ofSuccess();
    }
    shutdown = true;
    producer.close(Duration.ofSeconds(5));
    return CompletableResultCode.ofSuccess();
  }
}
