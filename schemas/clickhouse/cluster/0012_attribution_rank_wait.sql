-- Cluster variant of 0012_attribution_rank_wait.sql: the column goes on the local tables and on
-- the Distributed table over them.
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS RankWaitNs Int64 CODEC(ZSTD(1)) AFTER PrefillGpuNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS RankWaitNs Int64 AFTER PrefillGpuNs;
