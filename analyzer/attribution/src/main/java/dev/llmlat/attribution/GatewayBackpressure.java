package dev.llmlat.attribution;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * When the gateway could not write to its client (the client read slowly), from its SERVER span:
 * the blocks its backpressure events record (start, start + duration, what was full), merged where
 * they overlap and in time order, and the span's count and total, which cover every block while the
 * events are only the first 32.
 *
 * @param events the backpressure events on the span
 * @param undated those of them without a usable duration (not in {@code blocks})
 * @param recordedNs the summed durations of the placed events
 * @param count the span's count of blocks, -1 where it names none
 * @param totalNs the span's total blocked time, -1 where it names none
 */
record GatewayBackpressure(
    List<Block> blocks, int events, int undated, long recordedNs, long count, long totalNs) {

  /** Writes blocked from {@code startNs} until {@code endNs}, {@code cause} being full. */
  record Block(long startNs, long endNs, GatewayBlockCause cause) {
    Block(long startNs, long endNs) {
      this(startNs, endNs, GatewayBlockCause.UNKNOWN);
    }
  }

  static final GatewayBackpressure NONE = new GatewayBackpressure(List.of(), 0, 0, 0, -1, -1);

  static GatewayBackpressure of(SpanRecord server) {
    if (server == null) {
      return NONE;
    }
    List<Block> raw = new ArrayList<>();
    int events = 0;
    int undated = 0;
    long recorded = 0;
    for (SpanRecord.Event ev : server.events()) {
      if (!LlmlatAttributes.EVENT_GATEWAY_BACKPRESSURE.equals(ev.name())) {
        continue;
      }
      events++;
      long duration =
          SpanRecord.parseLong(
              ev.attributes().get(LlmlatAttributes.GATEWAY_BACKPRESSURE_DURATION_NS), -1);
      if (duration < 0) {
        undated++;
        continue;
      }
      recorded += duration;
      raw.add(
          new Block(
              ev.timeNs(),
              ev.timeNs() + duration,
              GatewayBlockCause.of(
                  ev.attributes().get(LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE))));
    }
    long count = server.longAttr(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT, -1);
    long total = server.longAttr(LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS, -1);
    if (events == 0 && count < 0) {
      return NONE;
    }
    raw.sort(Comparator.comparingLong(Block::startNs));
    List<Block> merged = new ArrayList<>(raw.size());
    for (Block b : raw) {
      Block last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      if (last != null && b.startNs() <= last.endNs()) {
        // overlapping blocks are one; the first one's cause stands, unless it named none
        GatewayBlockCause cause =
            last.cause() == GatewayBlockCause.UNKNOWN ? b.cause() : last.cause();
        merged.set(
            merged.size() - 1, new Block(last.startNs(), Math.max(last.endNs(), b.endNs()), cause));
      } else {
        merged.add(b);
      }
    }
    return new GatewayBackpressure(List.copyOf(merged), events, undated, recorded, count, total);
  }

  /**
   * Whether the span counted more blocks than it kept events for (later blocks are not placed in
   * time).
   */
  boolean truncated() {
    return count > events;
  }

  /**
   * Blocked time the span's total has beyond its events' durations, -1 where the total is unknown
   * or not larger.
   */
  long unplacedNs() {
    return totalNs > recordedNs ? totalNs - recordedNs : -1;
  }

  /**
   * The cause of the block that ends at or runs through {@code timeNs} (a token it held went out as
   * it ended), {@link GatewayBlockCause#UNKNOWN} when none does.
   */
  GatewayBlockCause causeAt(long timeNs) {
    int lo = 0;
    int hi = blocks.size();
    while (lo < hi) { // the last block starting before timeNs
      int mid = (lo + hi) >>> 1;
      if (blocks.get(mid).startNs() < timeNs) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo > 0 && blocks.get(lo - 1).endNs() >= timeNs
        ? blocks.get(lo - 1).cause()
        : GatewayBlockCause.UNKNOWN;
  }

  /** The end of the last placed block, -1 when none is placed. */
  long placedUntilNs() {
    return blocks.isEmpty() ? -1 : blocks.get(blocks.size() - 1).endNs();
  }

  /** The blocks moved by {@code offsetNs}. */
  GatewayBackpressure shifted(long offsetNs) {
    if (offsetNs == 0) {
      return this;
    }
    List<Block> moved =
        blocks.stream()
            .map(b -> new Block(b.startNs() + offsetNs, b.endNs() + offsetNs, b.cause()))
            .toList();
    return new GatewayBackpressure(moved, events, undated, recordedNs, count, totalNs);
  }

  /**
   * What the request's notes say about blocks that could not be placed in time (beyond the events
   * kept, or without a duration); empty when every block is placed.
   */
  List<String> notes() {
    List<String> out = new ArrayList<>(2);
    if (truncated()) {
      long unplaced = unplacedNs();
      out.add(
          "the gateway could not write to its client "
              + count
              + " times; only the first "
              + events
              + " were recorded as events"
              + (unplaced > 0
                  ? String.format(
                      ", %.1f ms of blocking after them is not placed in time", unplaced / 1e6)
                  : "")
              + ": inter-token gaps after the last recorded one do not show the gateway's part");
    }
    if (undated > 0) {
      out.add(
          undated
              + " gateway backpressure event(s) carry no "
              + LlmlatAttributes.GATEWAY_BACKPRESSURE_DURATION_NS
              + ": not placed in time");
    }
    return out;
  }
}
