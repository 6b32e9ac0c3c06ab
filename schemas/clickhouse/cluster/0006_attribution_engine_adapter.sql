-- Cluster variant of 0006_attribution_engine_adapter.sql: the columns go on the local tables and on
-- the Distributed table over them.
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS EngineAdapter LowCardinality(String) CODEC(ZSTD(1)) AFTER EngineInstance;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS KvTransferNs Int64 CODEC(ZSTD(1)) AFTER QueueNs;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS EngineInNs Int64 CODEC(ZSTD(1)) AFTER NetworkInNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS EngineAdapter LowCardinality(String) AFTER EngineInstance;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS KvTransferNs Int64 AFTER QueueNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS EngineInNs Int64 AFTER NetworkInNs;
