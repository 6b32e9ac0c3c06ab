-- Cluster variant of 0017_gpu_collectives.sql: each shard's view fills its own local table from its
-- own gpu_kernels_local rows; the Distributed table reads them all. Distributed DDL only: kernels a
-- cluster stored before this migration are copied once by hand (docs/operations.md, "Migrations").
CREATE TABLE IF NOT EXISTS gpu_collectives_local ON CLUSTER '{cluster}' (
    StepSpanId String CODEC(ZSTD(1)),
    Start DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    DurationNs UInt64 CODEC(T64, ZSTD(1)),
    Name String CODEC(ZSTD(1)),
    Device UInt16 CODEC(ZSTD(1)),
    Pid UInt32 CODEC(ZSTD(1)),
    CorrelationId UInt64 CODEC(ZSTD(1))
) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
PARTITION BY toDate(Start)
ORDER BY (StepSpanId, Start)
SETTINGS index_granularity = 8192;

CREATE TABLE IF NOT EXISTS gpu_collectives ON CLUSTER '{cluster}' AS gpu_collectives_local
ENGINE = Distributed('{cluster}', currentDatabase(), gpu_collectives_local, cityHash64(StepSpanId));

CREATE MATERIALIZED VIEW IF NOT EXISTS gpu_collectives_mv ON CLUSTER '{cluster}'
TO gpu_collectives_local
AS SELECT StepSpanId, Start, DurationNs, Name, Device, Pid, CorrelationId
FROM gpu_kernels_local
WHERE Kind = 'kernel' AND StepSpanId != '' AND match(Name, '(^|[ :])(ncclKernel_|ncclDevKernel_|cross_device_reduce_)');
