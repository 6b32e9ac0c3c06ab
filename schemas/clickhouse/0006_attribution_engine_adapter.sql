-- Which engine convention the analyzer read a request with (vLLM, TensorRT-LLM, SGLang, TGI, the
-- scheduler SDK, or "unknown engine"), and the KV-cache transfer time as a component of its own
-- (disaggregated serving), and the engine's handling before its scheduler's queue (templating,
-- tokenization, dispatch, validation) where the engine traces it. Rows analysed before read as '' and 0.
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS EngineAdapter LowCardinality(String) CODEC(ZSTD(1)) AFTER EngineInstance;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS KvTransferNs Int64 CODEC(ZSTD(1)) AFTER QueueNs;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS EngineInNs Int64 CODEC(ZSTD(1)) AFTER NetworkInNs;
