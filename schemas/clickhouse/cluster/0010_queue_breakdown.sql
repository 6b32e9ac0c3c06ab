-- Cluster variant of 0010_queue_breakdown.sql: the columns go on the local tables and on the
-- Distributed table over them.
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCauseKind Array(LowCardinality(String)) CODEC(ZSTD(1)) AFTER QueueNs;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCause Array(String) CODEC(ZSTD(1)) AFTER QueueCauseKind;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCauseNs Array(Int64) CODEC(ZSTD(1)) AFTER QueueCause;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCauseTraceId Array(String) CODEC(ZSTD(1)) AFTER QueueCauseNs;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCauseTokens Array(UInt32) CODEC(ZSTD(1)) AFTER QueueCauseTraceId;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCauseBatch Array(UInt32) CODEC(ZSTD(1)) AFTER QueueCauseTokens;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueLimit LowCardinality(String) CODEC(ZSTD(1)) AFTER QueueCauseBatch;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCauseKind Array(LowCardinality(String)) AFTER QueueNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCause Array(String) AFTER QueueCauseKind;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCauseNs Array(Int64) AFTER QueueCause;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCauseTraceId Array(String) AFTER QueueCauseNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCauseTokens Array(UInt32) AFTER QueueCauseTraceId;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueCauseBatch Array(UInt32) AFTER QueueCauseTokens;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS QueueLimit LowCardinality(String) AFTER QueueCauseBatch;
