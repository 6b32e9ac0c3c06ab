-- Disaggregated prefill/decode: the wait for the decode instance (the KV cache ready on the prefill
-- instance, the decode instance not receiving it yet: busy decoding, no free blocks, bootstrapping)
-- is a component of its own, between QueueNs and KvTransferNs, which is then the wire time alone.
-- Rows analysed before this migration, and requests one instance served, read 0.
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS DecodeWaitNs Int64 CODEC(ZSTD(1)) AFTER QueueNs;
