-- Tenants: whom each request was served for (Tenant: the llmlat.tenant attribute of its client, gateway or
-- engine span, or the attribute `analyze --tenant-attr` names; '' when none), and who made it wait:
-- TenantCause/TenantCauseNs, parallel arrays, the time of its queue spent behind the prefill of each
-- tenant's requests plus its batch interference shared equally among the other requests of its batches,
-- booked to their tenants. report --by tenant builds the interference matrix from them. Rows analysed
-- before this read '' and [].
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS Tenant LowCardinality(String) CODEC(ZSTD(1)) AFTER EngineAdapter;
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS TenantCause Array(LowCardinality(String)) CODEC(ZSTD(1));
ALTER TABLE llm_request_attribution ADD COLUMN IF NOT EXISTS TenantCauseNs Array(Int64) CODEC(ZSTD(1)) AFTER TenantCause;
