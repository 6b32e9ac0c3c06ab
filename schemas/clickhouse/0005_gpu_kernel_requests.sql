-- Kernel rows name their step (StepSpanId) and no longer repeat the step's request trace ids: a
-- decode step of 256 requests put 256 ids (9 KB) on each of its kernels, in every Kafka record and
-- every row. The GPU step span links to each request it served, once; this view joins them back.
ALTER TABLE gpu_kernels DROP INDEX IF EXISTS idx_trace_ids;
ALTER TABLE gpu_kernels DROP COLUMN IF EXISTS TraceIds;

-- One row per (kernel, request its step served). For one request, filter on RequestTraceId; to
-- find its kernels through the StepSpanId index instead:
--   SELECT * FROM gpu_kernels WHERE StepSpanId IN (SELECT SpanId FROM otel_traces
--     WHERE SpanName = 'step' AND ResourceAttributes['llmlat.layer'] = 'gpu' AND has(Links.TraceId, '<trace id>'))
CREATE VIEW IF NOT EXISTS gpu_kernel_requests AS
SELECT k.*, s.RequestTraceId AS RequestTraceId
FROM gpu_kernels AS k
INNER JOIN (
    SELECT SpanId AS StepSpanId, arrayJoin(Links.TraceId) AS RequestTraceId
    FROM otel_traces
    WHERE SpanName = 'step' AND ResourceAttributes['llmlat.layer'] = 'gpu'
) AS s ON k.StepSpanId = s.StepSpanId;
