-- Cluster variant of 0016_attribution_parts.sql: the columns go on the local tables and on the
-- Distributed table over them.
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS PartComponent Array(LowCardinality(String)) CODEC(ZSTD(1));
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS PartInstance Array(String) CODEC(ZSTD(1)) AFTER PartComponent;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS PartRole Array(LowCardinality(String)) CODEC(ZSTD(1)) AFTER PartInstance;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS PartNs Array(Int64) CODEC(ZSTD(1)) AFTER PartRole;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS LateRank Array(String) CODEC(ZSTD(1)) AFTER PartNs;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS LateRankDevice Array(String) CODEC(ZSTD(1)) AFTER LateRank;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS LateRankNs Array(Int64) CODEC(ZSTD(1)) AFTER LateRankDevice;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS LateRankSteps Array(UInt32) CODEC(ZSTD(1)) AFTER LateRankNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS PartComponent Array(LowCardinality(String));
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS PartInstance Array(String) AFTER PartComponent;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS PartRole Array(LowCardinality(String)) AFTER PartInstance;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS PartNs Array(Int64) AFTER PartRole;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS LateRank Array(String) AFTER PartNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS LateRankDevice Array(String) AFTER LateRank;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS LateRankNs Array(Int64) AFTER LateRankDevice;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS LateRankSteps Array(UInt32) AFTER LateRankNs;
