-- Cluster variant of 0009_import_claims.sql. Sharded by the import's id, so every claim of a file
-- lands on one shard, whose replicas deduplicate claims of one epoch through Keeper: one winner
-- whichever node a claimant reaches. A claimant waits until the epoch's row is visible where it
-- reads (a replica may lag), so it never decides on a row it cannot see.
CREATE TABLE IF NOT EXISTS llmlat_claims_local ON CLUSTER '{cluster}' (
    ImportId String CODEC(ZSTD(1)),                      -- SHA-256 of the file, first 32 hex digits
    Epoch UInt32 CODEC(ZSTD(1)),                         -- 1, then one more per takeover
    Claimant String CODEC(ZSTD(1)),                      -- store:<run> | kafka:<run>: one run of llmlat import
    Path LowCardinality(String) CODEC(ZSTD(1)),          -- store | kafka | released
    Owner String CODEC(ZSTD(1)),                         -- a store import's host, pid and start: whether it may still run
    ClaimedAt DateTime64(6) CODEC(ZSTD(1))
) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
ORDER BY (ImportId, Epoch)
SETTINGS index_granularity = 8192;

CREATE TABLE IF NOT EXISTS llmlat_claims ON CLUSTER '{cluster}' AS llmlat_claims_local
ENGINE = Distributed('{cluster}', currentDatabase(), llmlat_claims_local, cityHash64(ImportId));

ALTER TABLE llmlat_claims_local ON CLUSTER '{cluster}' MODIFY SETTING replicated_deduplication_window = 10000;
