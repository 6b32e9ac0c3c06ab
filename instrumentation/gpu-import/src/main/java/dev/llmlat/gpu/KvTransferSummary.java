package dev.llmlat.gpu;

import java.util.List;
import java.util.Locale;

/**
 * KV-cache transfers of disaggregated prefill/decode, one per request (and per repeat of its
 * transfer): the sender's {@code kv_send} and the receiver's {@code kv_recv} range, and on each
 * side the transfer kernels launched in it (NCCL send/recv), all on rank 0's clock as the
 * collectives are.
 *
 * <ul>
 *   <li>wait: receive kernel start − send kernel start, at least 0 — the request's KV waiting for
 *       the receiver (the send kernel spins meanwhile, unless NCCL buffered the message: {@link
 *       Transfer#buffered()});
 *   <li>wire: the overlap of the two kernels, while both run the data moves.
 * </ul>
 *
 * @param transfers in order of their first range's start
 */
public record KvTransferSummary(List<Transfer> transfers) {
  public KvTransferSummary {
    transfers = List.copyOf(transfers);
  }

  /**
   * One side: its range, and its transfer kernels' first start and last end (-1 when none joined).
   *
   * @param rank the collectives' rank of the device that ran its kernels, -1 when none
   * @param device -1 when no kernel joined
   */
  public record Side(
      int rank,
      long pid,
      long device,
      long rangeStartNs,
      long rangeEndNs,
      long kernelStartNs,
      long kernelEndNs) {
    public boolean hasKernel() {
      return kernelStartNs >= 0 && kernelEndNs >= kernelStartNs;
    }

    /**
     * When this side was done: the range closed and its kernels ended (a send's range closes at
     * enqueue).
     */
    public long doneNs() {
      return hasKernel() ? Math.max(rangeEndNs, kernelEndNs) : rangeEndNs;
    }
  }

  /**
   * @param send null when the export has no send range for it (likewise {@code recv})
   * @param waitNs -1 unless both sides have kernels
   * @param wireNs -1 unless both sides have kernels
   * @param bytes -1 when the export does not say
   */
  public record Transfer(
      String traceId, int occurrence, Side send, Side recv, long waitNs, long wireNs, long bytes) {
    /**
     * The send kernel ended before the receive kernel started: NCCL held the message for the
     * receiver.
     */
    public boolean buffered() {
      return send != null
          && recv != null
          && send.hasKernel()
          && recv.hasKernel()
          && send.kernelEndNs() <= recv.kernelStartNs();
    }
  }

  /**
   * {@code
   * [{"trace_id":…,"send":{…}|null,"recv":{…}|null,"wait_ms":…,"wire_ms":…,"buffered":…,"bytes":…},…]}.
   */
  public String toJson() {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < transfers.size(); i++) {
      Transfer t = transfers.get(i);
      b.append(i == 0 ? "" : ",")
          .append("{\"trace_id\":")
          .append(CollectiveSummary.string(t.traceId()))
          .append(",\"occurrence\":")
          .append(t.occurrence())
          .append(",\"send\":")
          .append(json(t.send()))
          .append(",\"recv\":")
          .append(json(t.recv()))
          .append(",\"wait_ms\":")
          .append(t.waitNs() < 0 ? "null" : GpuSummary.ms(t.waitNs()))
          .append(",\"wire_ms\":")
          .append(t.wireNs() < 0 ? "null" : GpuSummary.ms(t.wireNs()))
          .append(",\"buffered\":")
          .append(t.buffered())
          .append(",\"bytes\":")
          .append(t.bytes() < 0 ? "null" : Long.toString(t.bytes()))
          .append('}');
    }
    return b.append(']').toString();
  }

  private static String json(Side s) {
    if (s == null) {
      return "null";
    }
    return String.format(
        Locale.ROOT,
        "{\"rank\":%d,\"pid\":%d,\"device\":%d,\"range_start_unix_nano\":%d,"
            + "\"range_end_unix_nano\":%d,\"kernel_start_unix_nano\":%s,\"kernel_end_unix_nano\":%s}",
        s.rank(),
        s.pid(),
        s.device(),
        s.rangeStartNs(),
        s.rangeEndNs(),
        s.hasKernel() ? Long.toString(s.kernelStartNs()) : "null",
        s.hasKernel() ? Long.toString(s.kernelEndNs()) : "null");
  }

  /**
   * A table for people, one line per transfer, milliseconds (a side's: range start until {@link
   * Side#doneNs()}).
   */
  public String toText() {
    StringBuilder b =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "kv transfers: %d (wait = receive kernel start - send kernel start; wire = both kernels running)%n",
                transfers.size()));
    b.append(
        String.format(
            Locale.ROOT,
            "%-32s  %-13s  %-13s  %9s  %9s  %9s  %9s  %-8s  %s%n",
            "trace_id",
            "send pid/dev",
            "recv pid/dev",
            "send_ms",
            "recv_ms",
            "wait_ms",
            "wire_ms",
            "buffered",
            "bytes"));
    for (Transfer t : transfers) {
      b.append(
          String.format(
              Locale.ROOT,
              "%-32s  %-13s  %-13s  %9s  %9s  %9s  %9s  %-8s  %s%n",
              t.traceId(),
              instance(t.send()),
              instance(t.recv()),
              range(t.send()),
              range(t.recv()),
              ms(t.waitNs()),
              ms(t.wireNs()),
              t.buffered() ? "yes" : "",
              t.bytes() < 0 ? "" : Long.toString(t.bytes())));
    }
    return b.toString();
  }

  private static String instance(Side s) {
    return s == null ? "-" : s.pid() + "/" + (s.device() < 0 ? "?" : Long.toString(s.device()));
  }

  private static String range(Side s) {
    return s == null ? "-" : ms(s.doneNs() - s.rangeStartNs());
  }

  private static String ms(long ns) {
    return ns < 0 ? "-" : String.format(Locale.ROOT, "%.3f", ns / 1e6);
  }
}
