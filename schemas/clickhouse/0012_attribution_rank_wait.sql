-- Tensor parallelism: the time a request's steps waited in their collectives for a late rank (the
-- k-th collective of a step on each rank is one; a rank's wait is the latest start minus its own) is a
-- component of its own, between PrefillGpuNs and BatchInterferenceNs, taken out of PrefillGpuNs (and
-- PrefillCpuNs beyond the GPU's busy time). Rows analysed before this migration, and steps one rank ran, read 0.
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS RankWaitNs Int64 CODEC(ZSTD(1)) AFTER PrefillGpuNs;
