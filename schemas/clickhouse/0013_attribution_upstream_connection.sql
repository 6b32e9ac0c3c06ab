-- The gateway's upstream connection. Where the extension's connection hooks saw the gateway's call to
-- the engine, the way in is split further: UpstreamPoolWaitNs (waiting for a connection from the HTTP
-- client's pool), UpstreamConnectNs (TCP connect) and UpstreamTlsNs (the TLS handshake) come out of
-- GatewayInNs/NetworkInNs, and NetworkInNs is the wire (request headers written to the engine's arrival).
-- UpstreamClient names the client stack whose hooks saw it ('' : set-up unknown), UpstreamPool the
-- pool's key, UpstreamPoolMax its most connections and UpstreamPoolPending the requests already waiting
-- (-1: unknown), UpstreamConnection 'new', 'reused' or ''. Rows analysed before this read 0 and ''.
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS UpstreamPoolWaitNs Int64 CODEC(ZSTD(1)) AFTER GatewayInNs;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS UpstreamConnectNs Int64 CODEC(ZSTD(1)) AFTER UpstreamPoolWaitNs;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS UpstreamTlsNs Int64 CODEC(ZSTD(1)) AFTER UpstreamConnectNs;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS UpstreamClient LowCardinality(String) CODEC(ZSTD(1));
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS UpstreamPool LowCardinality(String) CODEC(ZSTD(1)) AFTER UpstreamClient;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS UpstreamPoolMax Int32 DEFAULT -1 CODEC(ZSTD(1)) AFTER UpstreamPool;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS UpstreamPoolPending Int32 DEFAULT -1 CODEC(ZSTD(1)) AFTER UpstreamPoolMax;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS UpstreamConnection LowCardinality(String) CODEC(ZSTD(1)) AFTER UpstreamPoolPending;
