package dev.llmlat.collector;

import java.util.Map;
import java.util.Set;

/**
 * The configuration keys the Collector documents for each component these configs use, as dotted
 * paths ({@code []} marks a list of maps). A key missing here is either a typo or a setting the
 * Collector does not know, and the Collector refuses to start on either.
 *
 * <p>Derived from opentelemetry-collector-contrib (main, the v0.15x series; the kafka exporter
 * README has no top-level topic/encoding any more, removed after their v0.124.0 deprecation):
 * exporter/kafkaexporter/README.md and config.schema.yaml, receiver/kafkareceiver/README.md and
 * config.go (TopicEncodingConfig: topic deprecated in v0.142.0 for topics),
 * exporter/clickhouseexporter/README.md ("Configuration options"),
 * processor/tailsamplingprocessor/README.md and config.go; and from opentelemetry-collector:
 * processor/memorylimiterprocessor/README.md, processor/batchprocessor/README.md and config.go,
 * receiver/otlpreceiver (protocols.grpc/http endpoints). Only the subsets we might set are listed
 * for TLS and authentication.
 */
final class DocumentedKeys {
  private DocumentedKeys() {}

  static final Set<String> TOP_LEVEL =
      Set.of("receivers", "processors", "exporters", "extensions", "connectors", "service");

  static final Set<String> PIPELINE = Set.of("receivers", "processors", "exporters");

  private static final Set<String> RETRY =
      Set.of(
          "retry_on_failure.enabled",
          "retry_on_failure.initial_interval",
          "retry_on_failure.randomization_factor",
          "retry_on_failure.multiplier",
          "retry_on_failure.max_interval",
          "retry_on_failure.max_elapsed_time");

  private static final Set<String> TLS =
      Set.of(
          "tls.insecure",
          "tls.insecure_skip_verify",
          "tls.ca_file",
          "tls.cert_file",
          "tls.key_file",
          "tls.server_name_override");

  private static final Set<String> KAFKA_CLIENT =
      Set.of(
          "brokers",
          "protocol_version",
          "resolve_canonical_bootstrap_servers_only",
          "client_id",
          "conn_idle_timeout",
          "auth.sasl.username",
          "auth.sasl.password",
          "auth.sasl.mechanism",
          "auth.sasl.version",
          "auth.sasl.aws_msk.region",
          "metadata.refresh_interval",
          "metadata.retry.max",
          "metadata.retry.backoff");

  static final Set<String> KAFKA_EXPORTER =
      union(
          KAFKA_CLIENT,
          RETRY,
          TLS,
          Set.of(
              "traces.topic",
              "traces.encoding",
              "traces.topic_from_metadata_key",
              "traces.message_key_from_metadata_key",
              "logs.topic",
              "logs.encoding",
              "metrics.topic",
              "metrics.encoding",
              "topic_from_attribute",
              "include_metadata_keys",
              "record_headers",
              "signal_header",
              "partition_traces_by_id",
              "partition_metrics_by_resource_attributes",
              "partition_logs_by_resource_attributes",
              "partition_logs_by_trace_id",
              "timeout",
              "record_partitioner.sticky_key.hasher",
              "record_partitioner.round_robin",
              "record_partitioner.least_backup",
              "record_partitioner.extension",
              "sending_queue.enabled",
              "sending_queue.num_consumers",
              "sending_queue.queue_size",
              "producer.max_message_bytes",
              "producer.max_broker_write_bytes",
              "producer.required_acks",
              "producer.compression",
              "producer.compression_params.level",
              "producer.flush_max_messages",
              "producer.allow_auto_topic_creation",
              "producer.linger"));

  /** The exporter's form before v0.124.0: one topic and encoding for every signal. */
  static final Set<String> KAFKA_EXPORTER_BEFORE_0_124 = Set.of("topic", "encoding");

  static final Set<String> KAFKA_RECEIVER =
      union(
          KAFKA_CLIENT,
          TLS,
          Set.of(
              "traces.topics",
              "traces.encoding",
              "traces.exclude_topics",
              "logs.topics",
              "logs.encoding",
              "metrics.topics",
              "metrics.encoding",
              "group_id",
              "rack_id",
              "use_leader_epoch",
              "initial_offset",
              "session_timeout",
              "heartbeat_interval",
              "group_rebalance_strategies",
              "group_instance_id",
              "min_fetch_size",
              "max_fetch_size",
              "max_fetch_wait",
              "max_partition_fetch_size",
              "autocommit.enable",
              "autocommit.interval",
              "message_marking.after",
              "message_marking.on_error",
              "message_marking.on_permanent_error",
              "partition_processing.independent",
              "partition_processing.max_buffered_batches",
              "header_extraction.extract_headers",
              "header_extraction.headers",
              "error_backoff.enabled",
              "error_backoff.initial_interval",
              "error_backoff.max_interval",
              "error_backoff.multiplier",
              "error_backoff.randomization_factor",
              "error_backoff.max_elapsed_time",
              "telemetry.metrics.kafka_receiver_records_delay.enabled"));

  /**
   * The receiver's single-topic forms: {@code traces.topic} (v0.124.0 to v0.141.x), {@code topic}
   * before.
   */
  static final Set<String> KAFKA_RECEIVER_BEFORE_0_142 =
      Set.of("traces.topic", "topic", "encoding");

  static final Set<String> CLICKHOUSE_EXPORTER =
      union(
          RETRY,
          TLS,
          Set.of(
              "endpoint",
              "username",
              "password",
              "ttl",
              "database",
              "connection_params",
              "create_schema",
              "compress",
              "async_insert",
              "json",
              "logs_table_name",
              "traces_table_name",
              "profiles_table_name",
              "metrics_tables.gauge.name",
              "metrics_tables.sum.name",
              "metrics_tables.summary.name",
              "metrics_tables.histogram.name",
              "metrics_tables.exponential_histogram.name",
              "cluster_name",
              "table_engine.name",
              "table_engine.params",
              "timeout",
              "sending_queue.enabled",
              "sending_queue.num_consumers",
              "sending_queue.queue_size",
              "sending_queue.sizer",
              "sending_queue.block_on_overflow",
              "sending_queue.storage",
              "sending_queue.batch.flush_timeout",
              "sending_queue.batch.min_size",
              "sending_queue.batch.max_size",
              "sending_queue.batch.sizer"));

  static final Set<String> OTLP_RECEIVER =
      Set.of(
          "protocols.grpc.endpoint",
          "protocols.grpc.max_recv_msg_size_mib",
          "protocols.http.endpoint",
          "protocols.http.traces_url_path");

  static final Set<String> MEMORY_LIMITER =
      Set.of(
          "check_interval",
          "limit_mib",
          "spike_limit_mib",
          "limit_percentage",
          "spike_limit_percentage");

  static final Set<String> BATCH =
      Set.of(
          "send_batch_size",
          "timeout",
          "send_batch_max_size",
          "metadata_keys",
          "metadata_cardinality_limit");

  static final Set<String> TAIL_SAMPLING =
      Set.of(
          "decision_wait",
          "num_traces",
          "expected_new_traces_per_sec",
          "decision_cache.sampled_cache_size",
          "decision_cache.non_sampled_cache_size",
          "sample_on_first_match",
          "drop_pending_traces_on_shutdown",
          "policies[].name",
          "policies[].type",
          "policies[].latency.threshold_ms",
          "policies[].latency.upper_threshold_ms",
          "policies[].probabilistic.sampling_percentage",
          "policies[].probabilistic.hash_salt",
          "policies[].status_code.status_codes",
          "policies[].numeric_attribute.key",
          "policies[].numeric_attribute.min_value",
          "policies[].numeric_attribute.max_value",
          "policies[].string_attribute.key",
          "policies[].string_attribute.values",
          "policies[].string_attribute.enabled_regex_matching",
          "policies[].string_attribute.invert_match",
          "policies[].rate_limiting.spans_per_second",
          "policies[].span_count.min_spans",
          "policies[].span_count.max_spans",
          "policies[].boolean_attribute.key",
          "policies[].boolean_attribute.value");

  /** Tail-sampling policy types (README "Multiple policies exist today"). */
  static final Set<String> TAIL_SAMPLING_POLICY_TYPES =
      Set.of(
          "always_sample",
          "latency",
          "numeric_attribute",
          "probabilistic",
          "status_code",
          "string_attribute",
          "trace_state",
          "trace_flags",
          "rate_limiting",
          "bytes_limiting",
          "span_count",
          "boolean_attribute",
          "ottl_condition",
          "and",
          "drop",
          "composite");

  /** Component kind ({@code receivers}, ...) → component type → its documented keys. */
  static final Map<String, Map<String, Set<String>>> BY_KIND =
      Map.of(
          "receivers", Map.of("otlp", OTLP_RECEIVER, "kafka", KAFKA_RECEIVER),
          "processors",
              Map.of(
                  "memory_limiter", MEMORY_LIMITER, "batch", BATCH, "tail_sampling", TAIL_SAMPLING),
          "exporters", Map.of("kafka", KAFKA_EXPORTER, "clickhouse", CLICKHOUSE_EXPORTER));

  /**
   * The columns the ClickHouse exporter's INSERT names
   * (exporter/clickhouseexporter/internal/sqltemplates/traces_insert.sql): llmlat's otel_traces
   * must have every one, or each insert fails.
   */
  static final Set<String> CLICKHOUSE_TRACES_INSERT_COLUMNS =
      Set.of(
          "Timestamp",
          "TraceId",
          "SpanId",
          "ParentSpanId",
          "TraceState",
          "SpanName",
          "SpanKind",
          "ServiceName",
          "ResourceAttributes",
          "ScopeName",
          "ScopeVersion",
          "SpanAttributes",
          "Duration",
          "StatusCode",
          "StatusMessage",
          "Events.Timestamp",
          "Events.Name",
          "Events.Attributes",
          "Links.TraceId",
          "Links.SpanId",
          "Links.TraceState",
          "Links.Attributes");

  @SafeVarargs
  private static Set<String> union(Set<String>... sets) {
    java.util.Set<String> all = new java.util.HashSet<>();
    for (Set<String> s : sets) {
      all.addAll(s);
    }
    return Set.copyOf(all);
  }
}
