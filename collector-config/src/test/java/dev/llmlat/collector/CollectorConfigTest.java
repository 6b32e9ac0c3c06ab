package dev.llmlat.collector;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The shipped Collector configurations: documented keys only, wired pipelines, llmlat's contract.
 */
class CollectorConfigTest {
  static final Path MODULE = Path.of(System.getProperty("basedir", "."));
  static final List<String> FILES =
      List.of("gateway-to-kafka.yaml", "kafka-to-clickhouse.yaml", "tail-sampling.yaml");
  static final String ENV_REF = "\\$\\{env:[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?}";

  static List<String> configs() {
    return FILES;
  }

  static CollectorConfig config(String file) {
    return CollectorConfig.load(MODULE.resolve(file));
  }

  @Test
  void shipsEveryConfigInTheJarAndNoOther() throws Exception {
    try (Stream<Path> files = Files.list(MODULE)) {
      assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml")))
          .containsExactlyInAnyOrderElementsOf(FILES);
    }
    for (String f : FILES) {
      assertThat(getClass().getClassLoader().getResource("collector-config/" + f))
          .as(f)
          .isNotNull();
    }
  }

  @ParameterizedTest
  @MethodSource("configs")
  void usesOnlyDocumentedComponentsAndKeys(String file) {
    CollectorConfig config = config(file);
    assertThat(config.root().keySet()).as(config.file()).isSubsetOf(DocumentedKeys.TOP_LEVEL);
    List<String> unknown = new ArrayList<>();
    DocumentedKeys.BY_KIND.forEach(
        (kind, types) ->
            config
                .components(kind)
                .forEach(
                    (id, cfg) -> {
                      Set<String> documented = types.get(CollectorConfig.type(id));
                      if (documented == null) {
                        unknown.add(kind + " type " + id);
                        return;
                      }
                      for (String path : CollectorConfig.keyPaths(cfg)) {
                        if (!documented.contains(path)) {
                          unknown.add(kind + "." + id + "." + path);
                        }
                      }
                    }));
    assertThat(unknown).as(config.file() + ": undocumented components or keys").isEmpty();
  }

  @ParameterizedTest
  @MethodSource("configs")
  void pipelinesReferenceDefinedComponentsAndUseEveryOne(String file) {
    CollectorConfig config = config(file);
    assertThat(config.pipelines()).as(config.file()).isNotEmpty();
    for (String kind : DocumentedKeys.PIPELINE) {
      List<String> used = new ArrayList<>();
      config
          .pipelines()
          .forEach(
              (id, p) -> {
                assertThat(CollectorConfig.type(id))
                    .as(config.file() + " pipeline " + id)
                    .isEqualTo("traces");
                assertThat(p.keySet())
                    .as(config.file() + " pipeline " + id)
                    .isSubsetOf(DocumentedKeys.PIPELINE);
                used.addAll(p.getOrDefault(kind, List.of()));
              });
      assertThat(config.components(kind).keySet())
          .as(config.file() + " " + kind + " referenced by pipelines")
          .containsAll(used);
      assertThat(used)
          .as(config.file() + " " + kind + " defined and used")
          .containsAll(config.components(kind).keySet());
    }
    config
        .pipelines()
        .forEach(
            (id, p) -> {
              assertThat(p.get("receivers")).as(id + " receivers").isNotEmpty();
              assertThat(p.get("exporters")).as(id + " exporters").isNotEmpty();
              // The processors' READMEs: memory_limiter first, batch after anything that drops
              // data.
              List<String> processors = p.getOrDefault("processors", List.of());
              assertThat(processors)
                  .as(id + " processors")
                  .startsWith("memory_limiter")
                  .endsWith("batch");
            });
  }

  @ParameterizedTest
  @MethodSource("configs")
  void endpointsAndSecretsComeFromTheEnvironment(String file) {
    CollectorConfig config = config(file);
    config
        .components("receivers")
        .forEach(
            (id, cfg) -> {
              for (String path : List.of("protocols.grpc.endpoint", "protocols.http.endpoint")) {
                Object v = CollectorConfig.at(cfg, path);
                if (v != null) {
                  assertThat(String.valueOf(v))
                      .as(config.file() + " " + id + "." + path)
                      .matches(ENV_REF);
                }
              }
            });
    Stream.of("receivers", "exporters")
        .flatMap(k -> config.components(k).values().stream())
        .map(cfg -> cfg.get("brokers"))
        .filter(b -> b != null)
        .forEach(
            b ->
                assertThat(CollectorConfig.strings(b))
                    .as(config.file() + " brokers")
                    .singleElement()
                    .asString()
                    .matches(ENV_REF));
  }

  @Test
  void llmlatsContractIsWhatTheseTestsAssume() {
    assertThat(LlmlatContract.topicFromContract()).isEqualTo(LlmlatContract.TOPIC);
    assertThat(LlmlatContract.tableFromDdl()).isEqualTo(LlmlatContract.TRACES_TABLE);
    assertThat(LlmlatContract.resource(LlmlatContract.TOPIC_README))
        .contains("encoding: " + LlmlatContract.ENCODING)
        .contains("partition_traces_by_id: true");
  }

  @Test
  void kafkaExportersWriteTheTopicContract() {
    for (String file : List.of("gateway-to-kafka.yaml", "tail-sampling.yaml")) {
      Map<String, Object> kafka = config(file).component("exporters", "kafka");
      assertThat(CollectorConfig.at(kafka, "traces.topic"))
          .as(file)
          .isEqualTo(LlmlatContract.TOPIC);
      assertThat(CollectorConfig.at(kafka, "traces.encoding"))
          .as(file)
          .isEqualTo(LlmlatContract.ENCODING);
      // Key = trace id hex, one trace per record: the contract's key.
      assertThat(kafka.get("partition_traces_by_id")).as(file).isEqualTo(true);
      // Same key, same partition as the Java client llmlat's layers produce with.
      assertThat(CollectorConfig.at(kafka, "record_partitioner.sticky_key.hasher"))
          .as(file)
          .isEqualTo("murmur2");
      // The current per-signal form only: the old top-level keys were removed from the exporter.
      assertThat(kafka)
          .as(file)
          .doesNotContainKeys(DocumentedKeys.KAFKA_EXPORTER_BEFORE_0_124.toArray(String[]::new));
      assertThat(kafka)
          .as(file + ": no headers of our own")
          .doesNotContainKeys("record_headers", "signal_header");
    }
  }

  @Test
  void kafkaReceiverReadsTheTopicContract() {
    Map<String, Object> kafka = config("kafka-to-clickhouse.yaml").component("receivers", "kafka");
    assertThat(CollectorConfig.strings(CollectorConfig.at(kafka, "traces.topics")))
        .containsExactly(LlmlatContract.TOPIC);
    assertThat(CollectorConfig.at(kafka, "traces.encoding")).isEqualTo(LlmlatContract.ENCODING);
    assertThat(CollectorConfig.keyPaths(kafka))
        .doesNotContainAnyElementsOf(DocumentedKeys.KAFKA_RECEIVER_BEFORE_0_142);
    // A fresh group starts at the beginning of the topic, as `llmlat ingest` does.
    assertThat(kafka.get("initial_offset")).isEqualTo("earliest");
  }

  @Test
  void clickhouseExporterInsertsIntoLlmlatsTableWithoutCreatingIt() {
    Map<String, Object> ch =
        config("kafka-to-clickhouse.yaml").component("exporters", "clickhouse");
    assertThat(ch.get("traces_table_name")).isEqualTo(LlmlatContract.TRACES_TABLE);
    assertThat(ch.get("create_schema")).isEqualTo(false);
    for (String key : List.of("endpoint", "username", "password", "database")) {
      assertThat(String.valueOf(ch.get(key))).as(key).matches(ENV_REF);
    }
    assertThat(String.valueOf(ch.get("password"))).as("no default password").doesNotContain(":-");
    assertThat(LlmlatContract.tracesColumns())
        .containsAll(DocumentedKeys.CLICKHOUSE_TRACES_INSERT_COLUMNS);
  }

  @Test
  void tailSamplingKeepsSlowTracesAndABaseline() {
    CollectorConfig config = config("tail-sampling.yaml");
    List<Map<String, Object>> policies = new ArrayList<>();
    for (Object p : (List<?>) config.component("processors", "tail_sampling").get("policies")) {
      policies.add(CollectorConfig.cast(p));
    }
    assertThat(policies)
        .extracting(p -> p.get("type"))
        .allSatisfy(
            t -> assertThat(DocumentedKeys.TAIL_SAMPLING_POLICY_TYPES).contains((String) t));
    // Each policy carries the settings block of its own type and no other.
    assertThat(policies)
        .allSatisfy(
            p ->
                assertThat(p.keySet())
                    .containsExactlyInAnyOrder("name", "type", (String) p.get("type")));
    assertThat(policies).extracting(p -> p.get("name")).doesNotHaveDuplicates();
    Map<String, Object> latency =
        policies.stream().filter(p -> "latency".equals(p.get("type"))).findFirst().orElseThrow();
    assertThat(String.valueOf(CollectorConfig.at(latency, "latency.threshold_ms")))
        .isEqualTo("${env:TTFT_THRESHOLD_MS:-500}");
    Map<String, Object> baseline =
        policies.stream()
            .filter(p -> "probabilistic".equals(p.get("type")))
            .findFirst()
            .orElseThrow();
    assertThat(String.valueOf(CollectorConfig.at(baseline, "probabilistic.sampling_percentage")))
        .matches(ENV_REF);
    assertThat(config.pipelines().get("traces").get("processors"))
        .containsExactly("memory_limiter", "tail_sampling", "batch");
  }

  @Test
  void readmeShowsHowToRunEveryConfig() throws Exception {
    String readme = Files.readString(MODULE.resolve("README.md"));
    for (String f : FILES) {
      assertThat(readme).contains("--config " + f);
    }
  }
}
