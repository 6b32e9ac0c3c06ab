-- Cluster variant of 0015_kept_traces.sql: sharded by trace id, as the spans are.
CREATE TABLE IF NOT EXISTS llmlat_kept_traces_local ON CLUSTER '{cluster}' (
    TraceId String CODEC(ZSTD(1)),
    Reason LowCardinality(String) CODEC(ZSTD(1)),
    DecidedAt DateTime64(6) CODEC(ZSTD(1))
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', DecidedAt)
ORDER BY TraceId
SETTINGS index_granularity = 8192;

CREATE TABLE IF NOT EXISTS llmlat_kept_traces ON CLUSTER '{cluster}' AS llmlat_kept_traces_local
ENGINE = Distributed('{cluster}', currentDatabase(), llmlat_kept_traces_local, cityHash64(TraceId));
