-- Cluster variant of 0007_imports.sql. The import ledger is sharded by its key like
-- llm_request_attribution, so every version of an import's row lands on one shard and FINAL stays
-- exact; the kernels' ImportId column goes on the local tables and on the Distributed table over them.
CREATE TABLE IF NOT EXISTS llmlat_imports_local ON CLUSTER '{cluster}' (
    ImportId String CODEC(ZSTD(1)),                      -- SHA-256 of the file, first 32 hex digits
    File String CODEC(ZSTD(1)),                          -- the path it was imported from, for messages
    Format LowCardinality(String) CODEC(ZSTD(1)),        -- nsys | kineto | cudaevent | otlp-json
    Options String CODEC(ZSTD(1)),                       -- the options that shaped its spans
    Status LowCardinality(String) CODEC(ZSTD(1)),        -- pending | done
    Spans UInt64 CODEC(ZSTD(1)),                         -- rows in otel_traces
    Kernels UInt64 CODEC(ZSTD(1)),                       -- rows in gpu_kernels
    ImportedAt DateTime64(6) CODEC(ZSTD(1))
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', ImportedAt)
ORDER BY (ImportId)
SETTINGS index_granularity = 8192;

CREATE TABLE IF NOT EXISTS llmlat_imports ON CLUSTER '{cluster}' AS llmlat_imports_local
ENGINE = Distributed('{cluster}', currentDatabase(), llmlat_imports_local, cityHash64(ImportId));

ALTER TABLE gpu_kernels_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ImportId LowCardinality(String) CODEC(ZSTD(1));
ALTER TABLE gpu_kernels ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ImportId LowCardinality(String);
