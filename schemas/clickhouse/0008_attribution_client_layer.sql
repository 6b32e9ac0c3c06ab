-- The client layer: when a request's trace starts at a client that sent trace context (llmlat
-- load, or a user's benchmark client), TTFT runs from the client's request to its first content
-- chunk, with the way to the gateway and back as components of their own. ServerTtftNs keeps the
-- TTFT the server side alone saw (equal to TtftNs without a client layer), so the gap between the
-- two is a column away. Rows analysed before this migration read 0.
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS ClientToGatewayNs Int64 CODEC(ZSTD(1)) AFTER TtftNs;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS GatewayToClientNs Int64 CODEC(ZSTD(1)) AFTER GatewayOutNs;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS ServerTtftNs Int64 CODEC(ZSTD(1)) AFTER TtftNs;
