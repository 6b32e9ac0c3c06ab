package dev.llmlat.otlpkafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A broker gone makes every Kafka client warn on every reconnect: said once per kind, then counted.
 */
class KafkaClientWarningsTest {
  private static String connect(String client, int node, int port) {
    return "2026-12-02T03:30:21.689+0000 WARN NetworkClient - ["
        + client
        + "] Connection to node "
        + node
        + " (/127.0.0.1:"
        + port
        + ") could not be established. Node may not be available.";
  }

  @Test
  void repeatedWarningsOfTheClientsAreSaidOnceAndCounted() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream target = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    String[] clients = {
      "Producer clientId=llmlat-span-exporter",
      "Consumer clientId=llmlat-ingest-1, groupId=llmlat-ingest",
      "Producer clientId=llmlat-ingest-dlq"
    };
    try (KafkaClientWarnings warnings = KafkaClientWarnings.over(target, Duration.ofHours(1))) {
      PrintStream err = warnings.stream();
      err.println("llmlat: something of our own");
      for (int i = 0; i < 150; i++) {
        err.println(connect(clients[i % 3], i % 2 == 0 ? 1 : -1, 44539));
        err.println(
            "2026-12-02T03:30:21.803+0000 WARN NetworkClient - ["
                + clients[i % 3]
                + "] Bootstrap broker 127.0.0.1:44539"
                + " (id: -1 rack: null isFenced: false) disconnected");
      }
      // a warning held back takes its stack trace with it
      err.println(
          "2026-12-02T03:30:22.000+0000 WARN Sender - [Producer clientId=llmlat-publisher] Got error produce response with"
              + " correlation id 7 on topic-partition otlp_spans-0, retrying. Error: KAFKA_STORAGE_ERROR");
      err.println(
          "2026-12-02T03:30:22.100+0000 WARN Sender - [Producer clientId=llmlat-publisher] Got error produce response with"
              + " correlation id 8 on topic-partition otlp_spans-1, retrying. Error: KAFKA_STORAGE_ERROR");
      err.println("org.apache.kafka.common.errors.KafkaStorageException: Disk error");
      err.println(
          "\tat org.apache.kafka.clients.producer.internals.Sender.completeBatch(Sender.java:1)");
      err.println("an ERROR of another kind passes: ERROR something");
    }
    List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
    assertThat(lines.stream().filter(l -> l.contains(" WARN "))).hasSize(3);
    assertThat(lines)
        .contains(
            "llmlat: something of our own", "an ERROR of another kind passes: ERROR something");
    assertThat(lines).noneMatch(l -> l.startsWith("\tat ") || l.contains("KafkaStorageException"));
    assertThat(lines)
        .contains(
            "llmlat: …and 149 more Kafka client warnings like it (Connection to node 1 (/127.0.0.1:44539)"
                + " could not be established. Node may not be available.)");
    assertThat(lines)
        .anyMatch(
            l ->
                l.startsWith(
                    "llmlat: …and 149 more Kafka client warnings like it (Bootstrap broker"));
    assertThat(lines)
        .anyMatch(
            l ->
                l.startsWith(
                    "llmlat: …and 1 more Kafka client warnings like it (Got error produce response"));
    assertThat(lines).hasSize(3 + 2 + 3);
  }

  @Test
  void installedItFiltersSystemErrAndPutsItBack() {
    PrintStream before = System.err;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    PrintStream captured = System.err;
    try {
      try (KafkaClientWarnings warnings = KafkaClientWarnings.install(Duration.ofHours(1))) {
        for (int i = 0; i < 10; i++) {
          System.err.println(connect("AdminClient clientId=adminclient-" + i, i, 9092));
        }
      }
      assertThat(System.err).isSameAs(captured);
    } finally {
      System.setErr(before);
    }
    assertThat(bytes.toString(StandardCharsets.UTF_8).lines())
        .hasSize(2)
        .last()
        .asString()
        .startsWith("llmlat: …and 9 more Kafka client warnings like it");
  }

  @Test
  void sendFailuresOfOneKindAreCounted() {
    RepeatedFailures failures = new RepeatedFailures("send failures");
    String first =
        "Expiring 12 record(s) for otlp_spans-0:120000 ms has passed since batch creation";
    assertThat(failures.record(first)).isTrue();
    for (int i = 0; i < 143; i++) {
      assertThat(
              failures.record(
                  "Expiring "
                      + i
                      + " record(s) for otlp_spans-"
                      + (i % 4)
                      + ":120000 ms has passed since batch creation"))
          .isFalse();
    }
    assertThat(failures.record("Topic otlp_spans not present in metadata after 15000 ms."))
        .isTrue();
    assertThat(failures.andMore(first)).isEqualTo(" (…and 143 more send failures like it)");
    assertThat(failures.andMore("Topic otlp_spans not present in metadata after 15000 ms."))
        .isEmpty();
    assertThat(failures.drainSummary())
        .containsExactly("…and 143 more send failures like it (" + first + ")");
    assertThat(failures.drainSummary()).isEmpty();
  }
}
