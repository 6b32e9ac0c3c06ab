package dev.llmlat.attribution;

/**
 * How one host's clock relates to the reference (the gateway's): add {@link #offsetAt(long)} to a
 * timestamp of that host. Estimated from client/server span pairs; {@code applied} is false when
 * the evidence is too weak to move spans (then {@code note} says why).
 *
 * @param offsetNs offset at {@code referenceNs}
 * @param driftNsPerSecond change of the offset per second of wall time (0 when not measurable)
 * @param uncertaintyNs half-width of the interval the true offset lies in
 */
public record ClockCorrection(
    String host,
    String relativeTo,
    long offsetNs,
    double driftNsPerSecond,
    long referenceNs,
    long uncertaintyNs,
    int pairs,
    boolean applied,
    String note) {

  public static ClockCorrection none(String host) {
    return new ClockCorrection(host, host, 0, 0, 0, 0, 0, false, "reference clock");
  }

  public long offsetAt(long timeNs) {
    if (!applied) {
      return 0;
    }
    return offsetNs + Math.round(driftNsPerSecond * ((timeNs - referenceNs) / 1e9));
  }
}
