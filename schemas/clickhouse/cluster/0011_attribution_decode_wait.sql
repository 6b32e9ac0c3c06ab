-- Cluster variant of 0011_attribution_decode_wait.sql: the column goes on the local tables and on
-- the Distributed table over them.
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS DecodeWaitNs Int64 CODEC(ZSTD(1)) AFTER QueueNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS DecodeWaitNs Int64 AFTER QueueNs;
