-- llmlat SQL cookbook: copy, paste, adapt. Every query here runs in the test suite against a real
-- capture (analyzer H200EndToEndTest), on the embedded engine; the same SQL runs on a server.
-- Run `llmlat analyze` first so llm_request_attribution is filled. Times are in ns unless named _ms.

-- name: ttft_components_by_model
-- TTFT and each component's p50/p99 per model, in ms.
SELECT Model,
       count() AS requests,
       round(quantileExact(0.5)(TtftNs) / 1e6, 3) AS ttft_p50_ms,
       round(quantileExact(0.99)(TtftNs) / 1e6, 3) AS ttft_p99_ms,
       round(quantileExact(0.5)(QueueNs) / 1e6, 3) AS queue_p50_ms,
       round(quantileExact(0.99)(QueueNs) / 1e6, 3) AS queue_p99_ms,
       round(quantileExact(0.5)(PrefillCpuNs) / 1e6, 3) AS prefill_cpu_p50_ms,
       round(quantileExact(0.5)(PrefillGpuNs) / 1e6, 3) AS prefill_gpu_p50_ms,
       round(quantileExact(0.99)(BatchInterferenceNs) / 1e6, 3) AS interference_p99_ms,
       round(quantileExact(0.5)(NetworkInNs + NetworkOutNs) / 1e6, 3) AS network_p50_ms,
       round(quantileExact(0.99)(UnattributedNs) / 1e6, 3) AS unattributed_p99_ms
FROM llm_request_attribution FINAL
GROUP BY Model
ORDER BY requests DESC;

-- name: slowest_requests_and_why
-- The 20 slowest first tokens, each with its largest component.
SELECT TraceId,
       round(TtftNs / 1e6, 1) AS ttft_ms,
       arraySort(x -> -x.2, [('gateway_in', GatewayInNs), ('network_in', NetworkInNs), ('engine_in', EngineInNs),
                             ('queue', QueueNs), ('kv_transfer', KvTransferNs),
                             ('prefill_cpu', PrefillCpuNs), ('prefill_gpu', PrefillGpuNs),
                             ('batch_interference', BatchInterferenceNs), ('first_sample', FirstSampleNs),
                             ('network_out', NetworkOutNs), ('gateway_out', GatewayOutNs),
                             ('unattributed', UnattributedNs)])[1].1 AS mostly,
       round(greatest(GatewayInNs, NetworkInNs, EngineInNs, QueueNs, KvTransferNs, PrefillCpuNs, PrefillGpuNs, BatchInterferenceNs,
                      FirstSampleNs, NetworkOutNs, GatewayOutNs, UnattributedNs) / 1e6, 1) AS mostly_ms,
       EngineAdapter,
       PromptTokens
FROM llm_request_attribution FINAL
ORDER BY TtftNs DESC
LIMIT 20;

-- name: slo_violations_per_hour
-- Share of requests over a 500 ms TTFT objective, per hour.
SELECT toStartOfHour(ArrivalTime) AS hour,
       count() AS requests,
       countIf(TtftNs > 500000000) AS over_slo,
       round(100 * over_slo / requests, 2) AS over_slo_pct
FROM llm_request_attribution FINAL
GROUP BY hour
ORDER BY hour;

-- name: stalls_caused_by_long_prompts
-- Inter-token stalls blamed on another request's prefill, grouped by the size of that prefill.
SELECT multiIf(tokens < 512, '< 512', tokens < 2048, '512-2047', '>= 2048') AS prefill_tokens,
       count() AS stalled_requests,
       round(avg(ItlMaxNs) / 1e6, 1) AS avg_worst_gap_ms
FROM (SELECT ItlMaxNs, toUInt32OrZero(extract(TopStallCause, '\\((\\d+) tokens\\)')) AS tokens
      FROM llm_request_attribution FINAL
      WHERE TopStallCause LIKE 'stalled by prefill%')
GROUP BY prefill_tokens
ORDER BY prefill_tokens;

-- name: queue_vs_prompt_length
-- Does queueing grow with the prompt? Median queue time by prompt size bucket.
SELECT multiIf(PromptTokens < 128, '< 128', PromptTokens < 1024, '128-1023', '>= 1024') AS prompt,
       count() AS requests,
       round(quantileExact(0.5)(QueueNs) / 1e6, 1) AS queue_p50_ms,
       round(quantileExact(0.5)(TtftNs) / 1e6, 1) AS ttft_p50_ms
FROM llm_request_attribution FINAL
GROUP BY prompt
ORDER BY prompt;

-- name: gpu_busy_per_step
-- GPU step spans: how much of each step's wall time the GPU was busy (launch-bound steps show low %).
SELECT SpanAttributes['llmlat.step.kind'] AS kind,
       count() AS steps,
       round(avg(Duration) / 1e6, 2) AS avg_step_ms,
       round(avg(toUInt64OrZero(SpanAttributes['llmlat.gpu.busy_ns'])) / 1e6, 2) AS avg_busy_ms,
       round(100 * sum(toUInt64OrZero(SpanAttributes['llmlat.gpu.busy_ns'])) / sum(Duration), 1) AS busy_pct
FROM otel_traces
WHERE ResourceAttributes['llmlat.layer'] = 'gpu' AND SpanName = 'step'
GROUP BY kind
ORDER BY steps DESC;

-- name: top_kernels_by_request
-- GPU kernel time spent on behalf of each request (steps shared by a batch count for each request in it).
SELECT RequestTraceId AS TraceId, count() AS kernels, round(sum(DurationNs) / 1e6, 3) AS kernel_ms
FROM gpu_kernel_requests
GROUP BY TraceId
ORDER BY kernel_ms DESC
LIMIT 20;

-- name: one_request_all_layers
-- Every span of one request across the layers, in time order (replace the trace id).
SELECT formatDateTime(Timestamp, '%H:%i:%S.%f') AS start, ResourceAttributes['llmlat.layer'] AS layer,
       ServiceName, SpanName, round(Duration / 1e6, 3) AS ms
FROM otel_traces
WHERE TraceId = (SELECT TraceId FROM llm_request_attribution FINAL ORDER BY TtftNs DESC LIMIT 1)
ORDER BY Timestamp;
