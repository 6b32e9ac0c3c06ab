package dev.llmlat.gpu.internal;

/**
 * One side of a KV transfer as a CPU range: the process that opened it, the key its kernels resolve
 * to ({@link NsysSteps#keyName}), the kind ({@code kv_send | kv_recv}), the request, Unix ns.
 */
public record KvRange(
    int clockDomain,
    long pid,
    StepKey key,
    String kind,
    String traceId,
    long startNs,
    long endNs) {}
