-- What a request's row could not say in one number per component. PartComponent/PartInstance/PartRole/
-- PartNs, parallel arrays: for a disaggregated request, each component's share on each instance it ran on
-- (role prefill, decode, or transfer for the KV's way between them), summing to the component; empty for
-- a request one instance served. LateRank/LateRankDevice/LateRankNs/LateRankSteps: under tensor
-- parallelism, the late ranks its steps waited for, summing to RankWaitNs. report --by instance and --by
-- rank read them. Rows analysed before this read [].
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS PartComponent Array(LowCardinality(String)) CODEC(ZSTD(1));
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS PartInstance Array(String) CODEC(ZSTD(1)) AFTER PartComponent;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS PartRole Array(LowCardinality(String)) CODEC(ZSTD(1)) AFTER PartInstance;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS PartNs Array(Int64) CODEC(ZSTD(1)) AFTER PartRole;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS LateRank Array(String) CODEC(ZSTD(1)) AFTER PartNs;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS LateRankDevice Array(String) CODEC(ZSTD(1)) AFTER LateRank;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS LateRankNs Array(Int64) CODEC(ZSTD(1)) AFTER LateRankDevice;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS LateRankSteps Array(UInt32) CODEC(ZSTD(1)) AFTER LateRankNs;
