-- Cluster variant of 0003_llm_request_attribution.sql. Re-analysing a request must replace its row,
-- and ReplacingMergeTree replaces only within a shard: the Distributed table shards by trace id, so
-- every version of a request's row lands on the same shard and FINAL stays exact.
CREATE TABLE IF NOT EXISTS llm_request_attribution_local ON CLUSTER '{cluster}' (
    TraceId String CODEC(ZSTD(1)),
    RequestId String CODEC(ZSTD(1)),
    Model LowCardinality(String) CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    EngineInstance LowCardinality(String) CODEC(ZSTD(1)),
    ArrivalTime DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    TtftStartLayer LowCardinality(String) CODEC(ZSTD(1)), -- gateway | engine
    TtftNs Int64 CODEC(ZSTD(1)),
    GatewayInNs Int64 CODEC(ZSTD(1)),
    NetworkInNs Int64 CODEC(ZSTD(1)),
    QueueNs Int64 CODEC(ZSTD(1)),
    PrefillCpuNs Int64 CODEC(ZSTD(1)),
    PrefillGpuNs Int64 CODEC(ZSTD(1)),
    BatchInterferenceNs Int64 CODEC(ZSTD(1)),
    FirstSampleNs Int64 CODEC(ZSTD(1)),
    NetworkOutNs Int64 CODEC(ZSTD(1)),
    GatewayOutNs Int64 CODEC(ZSTD(1)),
    UnattributedNs Int64 CODEC(ZSTD(1)),
    PromptTokens UInt32 CODEC(ZSTD(1)),
    OutputTokens UInt32 CODEC(ZSTD(1)),
    PrefillChunks UInt16 CODEC(ZSTD(1)),
    Preemptions UInt16 CODEC(ZSTD(1)),
    ItlCount UInt32 CODEC(ZSTD(1)),
    ItlP50Ns Int64 CODEC(ZSTD(1)),
    ItlP99Ns Int64 CODEC(ZSTD(1)),
    ItlMaxNs Int64 CODEC(ZSTD(1)),
    ItlStalls UInt32 CODEC(ZSTD(1)),
    TopStallCause String CODEC(ZSTD(1)),
    ClockCorrections Map(LowCardinality(String), Int64) CODEC(ZSTD(1)), -- host -> offset ns applied
    ClockUncertaintyNs Int64 CODEC(ZSTD(1)),
    AnalyzerVersion LowCardinality(String) CODEC(ZSTD(1)),
    AnalyzedAt DateTime64(3) CODEC(ZSTD(1))
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', AnalyzedAt)
PARTITION BY toDate(ArrivalTime)
ORDER BY (TraceId)
SETTINGS index_granularity = 8192;

CREATE TABLE IF NOT EXISTS llm_request_attribution ON CLUSTER '{cluster}' AS llm_request_attribution_local
ENGINE = Distributed('{cluster}', currentDatabase(), llm_request_attribution_local, cityHash64(TraceId));
