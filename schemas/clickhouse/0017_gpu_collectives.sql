-- The collective kernels (NCCL, custom all-reduce) of GPU steps, ordered by their step: tensor-parallel
-- attribution reads a step's collectives on every rank to find a late rank, and from gpu_kernels that
-- read passed every kernel of those steps (about eight of nine are not collectives). Filled by a
-- materialized view as kernels are stored, and once from the kernels already there; the name filter
-- is CollectiveKernels.sqlSuperset (schemas), which attribution narrows with CollectiveKernels.matches.
CREATE TABLE IF NOT EXISTS gpu_collectives (
    StepSpanId String CODEC(ZSTD(1)),
    Start DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    DurationNs UInt64 CODEC(T64, ZSTD(1)),
    Name String CODEC(ZSTD(1)),
    Device UInt16 CODEC(ZSTD(1)),
    Pid UInt32 CODEC(ZSTD(1)),
    CorrelationId UInt64 CODEC(ZSTD(1))
) ENGINE = MergeTree
PARTITION BY toDate(Start)
ORDER BY (StepSpanId, Start)
SETTINGS index_granularity = 8192;

INSERT INTO gpu_collectives
SELECT StepSpanId, Start, DurationNs, Name, Device, Pid, CorrelationId
FROM gpu_kernels
WHERE Kind = 'kernel' AND StepSpanId != '' AND match(Name, '(^|[ :])(ncclKernel_|ncclDevKernel_|cross_device_reduce_)');

CREATE MATERIALIZED VIEW IF NOT EXISTS gpu_collectives_mv
TO gpu_collectives
AS SELECT StepSpanId, Start, DurationNs, Name, Device, Pid, CorrelationId
FROM gpu_kernels
WHERE Kind = 'kernel' AND StepSpanId != '' AND match(Name, '(^|[ :])(ncclKernel_|ncclDevKernel_|cross_device_reduce_)');
