-- Cluster variant of 0008_attribution_client_layer.sql: the columns go on the local tables and on
-- the Distributed table over them.
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ClientToGatewayNs Int64 CODEC(ZSTD(1)) AFTER TtftNs;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS GatewayToClientNs Int64 CODEC(ZSTD(1)) AFTER GatewayOutNs;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ServerTtftNs Int64 CODEC(ZSTD(1)) AFTER TtftNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ClientToGatewayNs Int64 AFTER TtftNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS GatewayToClientNs Int64 AFTER GatewayOutNs;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS ServerTtftNs Int64 AFTER TtftNs;
