-- Cluster variant of 0002_gpu_kernels.sql: a replicated local table per shard and a Distributed
-- table with the user-facing name. The sharding key is a function of the row, never rand(): a batch
-- the ingester retries must split over the shards exactly as before, or the shards' deduplication
-- (by the batch's token) would keep the wrong rows.
CREATE TABLE IF NOT EXISTS gpu_kernels_local ON CLUSTER '{cluster}' (
    Start DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    DurationNs UInt64 CODEC(T64, ZSTD(1)),
    Kind LowCardinality(String) CODEC(ZSTD(1)),          -- kernel | memcpy | memset
    Name String CODEC(ZSTD(1)),
    Device UInt16 CODEC(ZSTD(1)),
    Stream UInt32 CODEC(ZSTD(1)),
    CorrelationId UInt64 CODEC(ZSTD(1)),
    Bytes UInt64 CODEC(ZSTD(1)),                         -- memcpy/memset size, 0 for kernels
    HostName LowCardinality(String) CODEC(ZSTD(1)),
    Pid UInt32 CODEC(ZSTD(1)),
    Tid UInt32 CODEC(ZSTD(1)),                           -- the CPU thread that launched it
    StepSpanId String CODEC(ZSTD(1)),                    -- '' when no step range matched
    StepName LowCardinality(String) CODEC(ZSTD(1)),
    TraceIds Array(String) CODEC(ZSTD(1)),               -- requests the step served
    Source LowCardinality(String) CODEC(ZSTD(1)),        -- nsys | kineto | cudaevent | ebpf | engine
    ClockRule LowCardinality(String) CODEC(ZSTD(1)),     -- how the start became Unix ns
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    INDEX idx_trace_ids TraceIds TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_step StepSpanId TYPE bloom_filter(0.001) GRANULARITY 1
) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
PARTITION BY toDate(Start)
ORDER BY (ServiceName, Device, Stream, Start)
SETTINGS index_granularity = 8192;

CREATE TABLE IF NOT EXISTS gpu_kernels ON CLUSTER '{cluster}' AS gpu_kernels_local
ENGINE = Distributed('{cluster}', currentDatabase(), gpu_kernels_local, cityHash64(HostName, Device, Stream, Start));
