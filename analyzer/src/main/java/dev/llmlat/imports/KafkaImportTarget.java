package dev.llmlat.imports;

import dev.llmlat.kafka.KafkaClientProperties;
import dev.llmlat.kafka.SpanPublisher;
import dev.llmlat.gpu.SpanBatch;
import java.util.UUID;

/** Publishes an import to the span topic in one Kafka transaction (the ingester reads committed only). */
public final class KafkaImportTarget implements ImportTarget {
  private final SpanPublisher publisher;
  private final String bootstrap;
  private final String topic;
  private boolean open;

  public KafkaImportTarget(String bootstrap, String topic) {
    this(bootstrap, topic, KafkaClientProperties.none());
  }

  public KafkaImportTarget(String bootstrap, String topic, KafkaClientProperties kafkaClient) {
    this.bootstrap = bootstrap;
    this.topic = topic;
    this.publisher = new SpanPublisher(bootstrap, topic, "llmlat-import-" + UUID.randomUUID(), kafkaClient);
    publisher.begin();
    open = true;
  }

  @Override
  public void accept(SpanBatch batch) {
    publisher.publish(batch);
  }

  @Override
  public void commit() {
    publisher.commit();
    open = false;
  }

  @Override
  public void abort() {
    if (open) {
      publisher.abort();
      open = false;
    }
  }

  public long records() {
    return publisher.records();
  }

  @Override
  public String description() {
    return "Kafka " + bootstrap + " topic " + topic;
  }

  @Override
  public void close() {
    try {
      abort();
    } catch (RuntimeException e) {
      // The broker is away: its transaction coordinator aborts the transaction at its timeout, and
      // read-committed consumers (the ingester) never see it. The error that got us here is the news.
    } finally {
      publisher.closeNow();
    }
  }
}
