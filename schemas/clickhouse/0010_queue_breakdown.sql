-- The queue breakdown: what the engine did while a request waited (QueueNs), as parallel arrays
-- of parts that sum exactly to QueueNs. QueueCauseKind is prefill (behind another request's
-- prefill: QueueCauseTraceId names it, QueueCauseTokens its tokens), decode (behind decode steps:
-- QueueCauseBatch is the largest batch), between_steps (the engine loop, no step running),
-- preempted (waiting to resume) or no_steps (the engine shows no steps). QueueLimit names the
-- scheduler limit that kept it waiting, where the engine's steps report scheduler state. Arrays,
-- not a JSON string, so reports aggregate with ARRAY JOIN. Rows analysed before this read empty.
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS QueueCauseKind Array(LowCardinality(String)) CODEC(ZSTD(1)) AFTER QueueNs;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS QueueCause Array(String) CODEC(ZSTD(1)) AFTER QueueCauseKind;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS QueueCauseNs Array(Int64) CODEC(ZSTD(1)) AFTER QueueCause;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS QueueCauseTraceId Array(String) CODEC(ZSTD(1)) AFTER QueueCauseNs;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS QueueCauseTokens Array(UInt32) CODEC(ZSTD(1)) AFTER QueueCauseTraceId;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS QueueCauseBatch Array(UInt32) CODEC(ZSTD(1)) AFTER QueueCauseTokens;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS QueueLimit LowCardinality(String) CODEC(ZSTD(1)) AFTER QueueCauseBatch;
