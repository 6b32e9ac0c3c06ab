-- The ingester retries a batch with the same insert_deduplication_token after a crash between
-- insert and offset commit; non-replicated MergeTree tables drop such a repeat only inside a
-- deduplication window. (Replicated tables keep one by default.) Column DDL stays untouched.
ALTER TABLE otel_traces MODIFY SETTING non_replicated_deduplication_window = 10000;
ALTER TABLE gpu_kernels MODIFY SETTING non_replicated_deduplication_window = 10000;
