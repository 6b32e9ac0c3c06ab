package dev.llmlat.cli.imports;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.cli.Llmlat;
import dev.llmlat.imports.ImportedFile;
import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.ExportFixtures;
import dev.llmlat.testing.KafkaBrokerExtension;
import dev.llmlat.testing.TopicEnd;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * One file, one copy in the store, whichever way it came and in whichever order: an import to Kafka
 * (stored by the ingester) and an import straight into the store, through the CLI, a real Kafka
 * broker (its own: the CLI publishes to otlp_spans) and the real engine.
 */
class ImportOnceAcrossPathsTest {
  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();

  @TempDir Path dir;

  /**
   * A file imported to Kafka, stored by the ingester, then imported into the store: the ingester's
   * rows carry the file's id and its ledger record, so the store import finds the file and stores
   * nothing; forced, it replaces the ingester's copy. One copy throughout.
   */
  @Test
  void aFileImportedThroughKafkaThenIntoTheStoreIsStoredOnce() throws Exception {
    Path export = ExportFixtures.nsysDecodeStep(dir.resolve("kafka-first.sqlite"), 4, 50, 0x5000);
    String id = ImportedFile.of(export, "nsys", "").id();
    Path data = dir.resolve("kafka-first-data");
    ensureSpansTopic();
    Cli toKafka =
        cli(
            "import",
            "nsys",
            export.toString(),
            "--kafka",
            broker.bootstrapServers(),
            "--data-dir",
            data.toString());
    assertThat(toKafka.out()).startsWith("imported " + export);

    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(data, EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      TopicEnd end = TopicEnd.mark(broker.bootstrapServers(), LlmlatTopics.SPANS);
      try (SpanIngester ingester =
          new SpanIngester(ingesterConfig("g-kafka-first"), store).start()) {
        end.awaitHandledBy(
            "g-kafka-first"); // everything published before the markers is stored: a second copy
        // would show
      }
      assertThat(counts(store, id)).isEqualTo(List.of(1L, 50L));
      assertThat(
              store
                  .query(
                      "SELECT Status, File, Format FROM llmlat_imports FINAL WHERE ImportId = {id:String}",
                      Map.of("id", id))
                  .rows())
          .containsExactly(List.of("ingested", export.toAbsolutePath().toString(), "nsys"));
    }

    Cli toStore =
        cli("import", "nsys", export.toString(), "--to", "store", "--data-dir", data.toString());
    assertThat(toStore.out())
        .startsWith("already imported into embedded ClickHouse (chDB) at ")
        .contains(" through Kafka (the ingester began storing it on ")
        .contains("nothing to do (--force imports it again, replacing that copy)")
        .doesNotContain("imported " + export);
    assertThat(counts(data, id)).isEqualTo(List.of(1L, 50L));

    Cli forced =
        cli(
            "import",
            "nsys",
            export.toString(),
            "--to",
            "store",
            "--force",
            "--data-dir",
            data.toString());
    assertThat(forced.out())
        .startsWith("--force: the copy the ingester stored from Kafka (since ")
        .contains("imported " + export);
    assertThat(counts(data, id)).isEqualTo(List.of(1L, 50L));
  }

  /**
   * The other way round: a file imported into the store is not published again (the Kafka import
   * asks the store it reaches); published anyway (--force), the ingester drops its records.
   */
  @Test
  void aFileImportedIntoTheStoreThenThroughKafkaIsStoredOnce() throws Exception {
    Path export = ExportFixtures.nsysDecodeStep(dir.resolve("store-first.sqlite"), 4, 50, 0x6000);
    String id = ImportedFile.of(export, "nsys", "").id();
    Path data = dir.resolve("store-first-data");
    ensureSpansTopic();
    cli("import", "nsys", export.toString(), "--to", "store", "--data-dir", data.toString());

    Cli toKafka =
        cli(
            "import",
            "nsys",
            export.toString(),
            "--kafka",
            broker.bootstrapServers(),
            "--data-dir",
            data.toString());
    assertThat(toKafka.out())
        .startsWith("already imported into embedded ClickHouse (chDB) at ")
        .contains(" (1 spans, 50 kernels): nothing to do (--force publishes it again)");

    Cli forced =
        cli(
            "import",
            "nsys",
            export.toString(),
            "--force",
            "--kafka",
            broker.bootstrapServers(),
            "--data-dir",
            data.toString());
    assertThat(forced.out())
        .startsWith(
            "--force: publishing; the ingester will not store it, since embedded ClickHouse (chDB) at ")
        .contains("imported " + export);
    TopicEnd end = TopicEnd.mark(broker.bootstrapServers(), LlmlatTopics.SPANS);
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(data, EngineLibrary.locate());
        SpanIngester ingester = new SpanIngester(ingesterConfig("g-store-first"), store).start()) {
      end.awaitHandledBy("g-store-first"); // the forced publication, before the markers, is handled
      assertThat(ingester.metrics().snapshot().importSpansSkipped()).isEqualTo(51);
    }
    assertThat(counts(data, id)).isEqualTo(List.of(1L, 50L));
  }

  record Cli(String out, String err) {}

  private static Cli cli(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = Llmlat.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
    assertThat(exit).as(out + "\n" + err).isZero();
    return new Cli(out.toString(), err.toString());
  }

  private static void ensureSpansTopic() throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, LlmlatTopics.SPANS, 2);
    }
  }

  private static IngesterConfig ingesterConfig(String group) {
    return IngesterConfig.builder(broker.bootstrapServers())
        .topic(LlmlatTopics.SPANS)
        .groupId(group)
        .linger(Duration.ofMillis(100))
        .reportInterval(Duration.ZERO)
        .build();
  }

  /** Rows of import {@code id} in otel_traces and gpu_kernels. */
  private static List<Long> counts(EmbeddedClickHouse store, String id) {
    return List.of(
        Long.parseLong(
            store
                .query(
                    "SELECT count() FROM otel_traces WHERE ResourceAttributes['llmlat.import.id'] = {id:String}",
                    Map.of("id", id))
                .single()),
        Long.parseLong(
            store
                .query(
                    "SELECT count() FROM gpu_kernels WHERE ImportId = {id:String}",
                    Map.of("id", id))
                .single()));
  }

  private static List<Long> counts(Path data, String id) {
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(data, EngineLibrary.locate())) {
      return counts(store, id);
    }
  }
}
