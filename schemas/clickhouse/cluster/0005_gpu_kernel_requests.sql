-- Cluster variant of 0005_gpu_kernel_requests.sql. The column goes from the local tables and from
-- the Distributed table over them; the view joins GLOBAL, so the step spans (from every shard) are
-- gathered once and sent to the shards that hold the kernels.
ALTER TABLE gpu_kernels_local ON CLUSTER '{cluster}' DROP INDEX IF EXISTS idx_trace_ids;
ALTER TABLE gpu_kernels_local ON CLUSTER '{cluster}' DROP COLUMN IF EXISTS TraceIds;
ALTER TABLE gpu_kernels ON CLUSTER '{cluster}' DROP COLUMN IF EXISTS TraceIds;

CREATE VIEW IF NOT EXISTS gpu_kernel_requests ON CLUSTER '{cluster}' AS
SELECT k.*, s.RequestTraceId AS RequestTraceId
FROM gpu_kernels AS k
GLOBAL INNER JOIN (
    SELECT SpanId AS StepSpanId, arrayJoin(Links.TraceId) AS RequestTraceId
    FROM otel_traces
    WHERE SpanName = 'step' AND ResourceAttributes['llmlat.layer'] = 'gpu'
) AS s ON k.StepSpanId = s.StepSpanId;
