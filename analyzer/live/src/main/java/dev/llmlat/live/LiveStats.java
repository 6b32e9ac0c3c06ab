package dev.llmlat.live;

/**
 * What a live attributor has done so far: records and spans read, traces waiting and held,
 * attributions (and late re-attributions) written, failures, and the lag from a trace's last span
 * to its row in ns.
 */
public record LiveStats(
    long records,
    long undecodable,
    long spans,
    long waiting,
    long held,
    long attributions,
    long lateReattributions,
    long rowsWritten,
    long storeFailures,
    long expiredWithoutRequest,
    long failedTraces,
    long lag) {}
