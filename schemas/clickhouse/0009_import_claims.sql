-- One file, one copy, whichever way it comes (llmlat import --to store, or --to kafka and the
-- ingester): whoever is about to write a file's rows claims it here first, and only the claim's
-- winner writes. A claim is one row per (ImportId, Epoch), inserted with the deduplication token
-- llmlat.claim.<id>.<epoch>: of claimants racing for one epoch the table keeps the first row and
-- drops the others as repeats, so every party reads back the same winner. A higher epoch takes a
-- file over (a re-run after a crash, --force, or a claim after a released one). Never updated.
CREATE TABLE IF NOT EXISTS llmlat_claims (
    ImportId String CODEC(ZSTD(1)),                      -- SHA-256 of the file, first 32 hex digits
    Epoch UInt32 CODEC(ZSTD(1)),                         -- 1, then one more per takeover
    Claimant String CODEC(ZSTD(1)),                      -- store:<run> | kafka:<run>: one run of llmlat import
    Path LowCardinality(String) CODEC(ZSTD(1)),          -- store | kafka | released
    Owner String CODEC(ZSTD(1)),                         -- a store import's host, pid and start: whether it may still run
    ClaimedAt DateTime64(6) CODEC(ZSTD(1))
) ENGINE = MergeTree
ORDER BY (ImportId, Epoch)
SETTINGS index_granularity = 8192;

-- The claim is decided by the deduplication window (non-replicated tables keep none by default).
ALTER TABLE llmlat_claims MODIFY SETTING non_replicated_deduplication_window = 10000;
