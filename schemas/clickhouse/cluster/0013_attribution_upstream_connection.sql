-- Cluster variant of 0013_attribution_upstream_connection.sql: the columns go on the local tables and
-- on the Distributed table over them.
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamPoolWaitNs Int64 CODEC(ZSTD(1)) AFTER GatewayInNs;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamConnectNs Int64 CODEC(ZSTD(1)) AFTER UpstreamPoolWaitNs;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamTlsNs Int64 CODEC(ZSTD(1)) AFTER UpstreamConnectNs;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamClient LowCardinality(String) CODEC(ZSTD(1));
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamPool LowCardinality(String) CODEC(ZSTD(1)) AFTER UpstreamClient;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamPoolMax Int32 DEFAULT -1 CODEC(ZSTD(1)) AFTER UpstreamPool;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamPoolPending Int32 DEFAULT -1 CODEC(ZSTD(1)) AFTER UpstreamPoolMax;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamConnection LowCardinality(String) CODEC(ZSTD(1)) AFTER UpstreamPoolPending;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamPoolWaitNs Int64 AFTER GatewayInNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamConnectNs Int64 AFTER UpstreamPoolWaitNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamTlsNs Int64 AFTER UpstreamConnectNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamClient LowCardinality(String);
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamPool LowCardinality(String) AFTER UpstreamClient;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamPoolMax Int32 DEFAULT -1 AFTER UpstreamPool;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamPoolPending Int32 DEFAULT -1 AFTER UpstreamPoolMax;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS UpstreamConnection LowCardinality(String) AFTER UpstreamPoolPending;
