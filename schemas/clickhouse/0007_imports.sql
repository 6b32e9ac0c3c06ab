-- Imports are atomic and idempotent (`llmlat import … --to store`). One row per imported file,
-- keyed by the SHA-256 of its bytes: written 'pending' before the import's rows reach otel_traces
-- and gpu_kernels, 'done' after both; a re-run checks it first ("already imported") and removes the
-- partial copy an interrupted run left. The latest row of an import wins; read with FINAL.
CREATE TABLE IF NOT EXISTS llmlat_imports (
    ImportId String CODEC(ZSTD(1)),                      -- SHA-256 of the file, first 32 hex digits
    File String CODEC(ZSTD(1)),                          -- the path it was imported from, for messages
    Format LowCardinality(String) CODEC(ZSTD(1)),        -- nsys | kineto | cudaevent | otlp-json
    Options String CODEC(ZSTD(1)),                       -- the options that shaped its spans
    Status LowCardinality(String) CODEC(ZSTD(1)),        -- pending | done
    Spans UInt64 CODEC(ZSTD(1)),                         -- rows in otel_traces
    Kernels UInt64 CODEC(ZSTD(1)),                       -- rows in gpu_kernels
    ImportedAt DateTime64(6) CODEC(ZSTD(1))
) ENGINE = ReplacingMergeTree(ImportedAt)
ORDER BY (ImportId)
SETTINGS index_granularity = 8192;

-- Rows name the import that wrote them, so a re-run can remove an interrupted copy (and --force an
-- earlier one): spans by the resource attribute llmlat.import.id, kernels by this column ('' for
-- rows the ingester wrote).
ALTER TABLE gpu_kernels ADD COLUMN IF NOT EXISTS ImportId LowCardinality(String) CODEC(ZSTD(1));
