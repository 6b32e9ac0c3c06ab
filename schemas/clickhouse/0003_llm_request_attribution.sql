-- One row per request: TTFT split into components that sum exactly to TtftNs, the inter-token
-- latency summary, and the clock corrections that were applied. Re-running the analyzer replaces
-- a request's row (ReplacingMergeTree on AnalyzedAt); read with FINAL for exact results.
CREATE TABLE IF NOT EXISTS llm_request_attribution (
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
) ENGINE = ReplacingMergeTree(AnalyzedAt)
PARTITION BY toDate(ArrivalTime)
ORDER BY (TraceId)
SETTINGS index_granularity = 8192;
