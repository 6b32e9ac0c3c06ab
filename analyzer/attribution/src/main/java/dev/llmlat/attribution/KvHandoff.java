package dev.llmlat.attribution;

import dev.llmlat.attribution.engines.EngineRequest;
import dev.llmlat.semconv.LlmlatAttributes;
import java.util.List;

/**
 * How a disaggregated request's KV cache went from the prefill to the decode instance: when it was
 * ready to go (the prefill done and the send posted), and the wire time alone, while both sides
 * were in the transfer. Between the two the decode instance was not receiving (busy decoding, no
 * free blocks, bootstrapping the connection): {@code decode_wait}.
 *
 * <p>The wire time is the overlap of the send and receive kernels; a buffered send (its kernel
 * ended before the receive started) is the receive kernel's duration; without kernels, the overlap
 * of the two instances' own transfer spans where both time their side, else the one engine's
 * transfer time.
 */
record KvHandoff(long readyNs, long wireStartNs, long wireEndNs, String wireSource) {

  static KvHandoff of(
      Disaggregation pair,
      long prefillDoneNs,
      EngineRequest prefill,
      EngineRequest decode,
      List<String> notes) {
    long ready = prefillDoneNs;
    if (pair.kvSend() != null) {
      ready =
          Math.max(
              ready,
              pair.kvSend().longAttr(LlmlatAttributes.KV_RANGE_START, pair.kvSend().startNs()));
    }
    long[] send = kernel(pair.kvSend());
    long[] recv = kernel(pair.kvRecv());
    long start;
    long end;
    String source;
    List<EngineRequest.Interval> engine =
        !decode.kvTransfers().isEmpty() ? decode.kvTransfers() : prefill.kvTransfers();
    if (send != null && recv != null) {
      start = Math.max(send[0], recv[0]);
      end = Math.min(send[1], recv[1]);
      source = "send and receive kernels overlapping";
      if (end <= start) {
        start = recv[0];
        end = recv[1];
        source = "buffered send: the receive kernel";
      }
    } else if (!decode.kvTransfers().isEmpty()
        && !prefill.kvTransfers().isEmpty()
        && overlap(prefill.kvTransfers(), decode.kvTransfers()) != null) {
      // both instances time their side (SGLang): the wire is while both were in the transfer
      long[] both = overlap(prefill.kvTransfers(), decode.kvTransfers());
      start = both[0];
      end = both[1];
      source =
          prefill.kvTransfers().get(0).source()
              + " and "
              + decode.kvTransfers().get(0).source()
              + " overlapping";
    } else if (!engine.isEmpty()) {
      start = engine.get(0).startNs();
      end = engine.get(engine.size() - 1).endNs();
      source = engine.get(0).source() + " (the engine's transfer time)";
    } else if (recv != null) {
      start = recv[0];
      end = recv[1];
      source = "the receive kernel";
      notes.add(
          "disaggregated: no send kernel on the prefill instance: the receive kernel is taken as the wire time");
    } else {
      start = decode.queuedNs();
      end = start;
      source = "";
      notes.add(
          "disaggregated: neither instance times the KV transfer: kv_transfer cannot be split from decode_wait");
    }
    start = Math.max(start, ready);
    return new KvHandoff(ready, start, Math.max(start, end), source);
  }

  /** Where two instances' transfer intervals (first start to last end each) overlap, or null. */
  private static long[] overlap(List<EngineRequest.Interval> a, List<EngineRequest.Interval> b) {
    long start = Math.max(a.get(0).startNs(), b.get(0).startNs());
    long end = Math.min(a.get(a.size() - 1).endNs(), b.get(b.size() - 1).endNs());
    return end > start ? new long[] {start, end} : null;
  }

  /** The transfer kernels' first start and last end on one side, or null. */
  private static long[] kernel(SpanRecord side) {
    if (side == null) {
      return null;
    }
    long start = side.longAttr(LlmlatAttributes.KV_KERNEL_START, -1);
    long end = side.longAttr(LlmlatAttributes.KV_KERNEL_END, -1);
    return start < 0 || end < start ? null : new long[] {start, end};
  }
}
