-- Retention decided by attribution (llmlat retain): the traces whose every span and kernel is kept
-- past the retention age, and why: slo (TTFT over the objective), failed (a span with status Error),
-- slowest (in the slowest share per model), sample (the deterministic sample of the rest:
-- cityHash64(TraceId) under the rate), serves (its spans serve a kept or not yet decided request:
-- a batch's step lives in the trace of its first request). Everything else older than the age is
-- deleted from otel_traces and gpu_kernels; llm_request_attribution keeps every row. One row per
-- trace (a re-run writes the same decision again).
CREATE TABLE IF NOT EXISTS llmlat_kept_traces (
    TraceId String CODEC(ZSTD(1)),
    Reason LowCardinality(String) CODEC(ZSTD(1)),
    DecidedAt DateTime64(6) CODEC(ZSTD(1))
) ENGINE = ReplacingMergeTree(DecidedAt)
ORDER BY TraceId
SETTINGS index_granularity = 8192;
