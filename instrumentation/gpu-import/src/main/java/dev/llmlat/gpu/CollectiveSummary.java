package dev.llmlat.gpu;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Collectives across ranks (tensor parallelism: one process per device). A collective is the k-th
 * collective kernel of a step on each rank; times are put on rank 0's clock first (ranks of one
 * export share a clock; others get an offset from the collectives' ends, which coincide).
 *
 * <ul>
 *   <li>a rank's wait in a collective: latest start among ranks − its own start;
 *   <li>the collective's own time: the shortest duration among ranks (TraceLens's NCCL analysis);
 *   <li>overlap: time a collective kernel runs while a compute kernel runs on the same device.
 * </ul>
 *
 * @param matched collectives matched across all ranks
 * @param ranks ordered by export, then device, then process
 * @param steps in time order; collectives launched outside any step form one entry with no name
 */
public record CollectiveSummary(
    long matched, List<RankCollectives> ranks, List<StepStraggler> steps) {
  public CollectiveSummary {
    ranks = List.copyOf(ranks);
    steps = List.copyOf(steps);
  }

  /**
   * One rank's device.
   *
   * @param pid -1 when the export does not say (Kineto)
   * @param collectives its collective kernels, matched or not
   * @param collectiveNs their summed duration (its own view: includes waiting inside the kernel)
   * @param ownNs summed own time (shortest duration among ranks) of its matched collectives
   * @param waitNs summed wait over its matched collectives
   * @param clockOffsetNs added to its times to reach rank 0's clock
   * @param clockEvidence end differences the offset rests on (0: none, offset left at 0)
   */
  public record RankCollectives(
      int rank,
      Path file,
      long pid,
      long device,
      long collectives,
      long matched,
      long collectiveNs,
      long ownNs,
      long waitNs,
      long overlapNs,
      long clockOffsetNs,
      long clockEvidence) {}

  /**
   * The rank that held a step's collectives up: each collective's latest starter is charged its
   * lead over the earliest (the longest any rank waited for it); the straggler is the rank charged
   * most, {@code lateNs} what it was charged.
   *
   * @param name the step's range text, null for collectives outside any step
   * @param occurrence how many earlier steps had this text on each rank
   * @param straggler a rank, -1 when no collective of the step had a late starter
   */
  public record StepStraggler(
      int index, String name, int occurrence, int collectives, int straggler, long lateNs) {}

  /** {@code {"matched":…,"devices":[…],"steps":[…]}}, milliseconds to the nanosecond. */
  public String toJson() {
    StringBuilder b = new StringBuilder("{\"matched\":").append(matched).append(",\"devices\":[");
    for (int i = 0; i < ranks.size(); i++) {
      RankCollectives r = ranks.get(i);
      b.append(i == 0 ? "" : ",")
          .append(
              String.format(
                  Locale.ROOT,
                  "{\"rank\":%d,\"file\":%s,\"pid\":%d,\"device\":%d,\"collectives\":%d,\"matched\":%d,\"collective_ms\":%s,"
                      + "\"own_ms\":%s,\"wait_ms\":%s,\"overlap_ms\":%s,\"clock_offset_ms\":%s,\"clock_evidence\":%d}",
                  r.rank(),
                  string(r.file() == null ? null : r.file().toString()),
                  r.pid(),
                  r.device(),
                  r.collectives(),
                  r.matched(),
                  GpuSummary.ms(r.collectiveNs()),
                  GpuSummary.ms(r.ownNs()),
                  GpuSummary.ms(r.waitNs()),
                  GpuSummary.ms(r.overlapNs()),
                  GpuSummary.ms(r.clockOffsetNs()),
                  r.clockEvidence()));
    }
    b.append("],\"steps\":[");
    for (int i = 0; i < steps.size(); i++) {
      StepStraggler s = steps.get(i);
      b.append(i == 0 ? "" : ",")
          .append(
              String.format(
                  Locale.ROOT,
                  "{\"index\":%d,\"name\":%s,\"occurrence\":%d,\"collectives\":%d,\"straggler\":%d,\"late_ms\":%s}",
                  s.index(),
                  string(s.name()),
                  s.occurrence(),
                  s.collectives(),
                  s.straggler(),
                  GpuSummary.ms(s.lateNs())));
    }
    return b.append("]}").toString();
  }

  static String string(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20) {
        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }
}
