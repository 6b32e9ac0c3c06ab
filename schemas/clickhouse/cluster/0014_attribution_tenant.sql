-- Cluster variant of 0014_attribution_tenant.sql: the columns go on the local tables and on the
-- Distributed table over them.
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS Tenant LowCardinality(String) CODEC(ZSTD(1)) AFTER EngineAdapter;
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS TenantCause Array(LowCardinality(String)) CODEC(ZSTD(1));
ALTER TABLE llm_request_attribution_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS TenantCauseNs Array(Int64) CODEC(ZSTD(1)) AFTER TenantCause;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS Tenant LowCardinality(String) AFTER EngineAdapter;
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS TenantCause Array(LowCardinality(String));
ALTER TABLE llm_request_attribution ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS TenantCauseNs Array(Int64) AFTER TenantCause;
