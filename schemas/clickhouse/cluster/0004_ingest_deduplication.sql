-- Cluster variant of 0004_ingest_deduplication.sql. Replicated tables deduplicate retried inserts
-- through Keeper; the window is widened to the single-node variant's 10,000 blocks so a batch
-- retried after a long outage is still recognised.
ALTER TABLE otel_traces_local ON CLUSTER '{cluster}' MODIFY SETTING replicated_deduplication_window = 10000;
ALTER TABLE gpu_kernels_local ON CLUSTER '{cluster}' MODIFY SETTING replicated_deduplication_window = 10000;
