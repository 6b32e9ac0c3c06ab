package dev.llmlat.gpu;

import dev.llmlat.gpu.internal.CollectiveAnalysis;
import dev.llmlat.gpu.internal.KvRange;
import dev.llmlat.gpu.internal.KvTransferAnalysis;
import dev.llmlat.gpu.internal.RankTimeline;
import dev.llmlat.gpu.internal.Summaries;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The summaries of one or more exports of one run, and across them the collectives of its ranks
 * (one Nsight export of every process, or one Kineto trace per rank).
 *
 * @param collectives null unless at least two ranks ran collectives
 * @param kvTransfers the KV-cache transfers between instances (disaggregated prefill/decode), null
 *     when none
 */
public record GpuSummaries(
    List<GpuSummary> files, CollectiveSummary collectives, KvTransferSummary kvTransfers) {
  public GpuSummaries {
    files = List.copyOf(files);
  }

  public GpuSummaries(List<GpuSummary> files, CollectiveSummary collectives) {
    this(files, collectives, null);
  }

  /** Each file's format is detected from its content; each file is a clock domain of its own. */
  public static GpuSummaries of(List<Path> files) throws IOException {
    List<GpuSummary> summaries = new ArrayList<>();
    List<RankTimeline> ranks = new ArrayList<>();
    List<KvRange> transfers = new ArrayList<>();
    for (int i = 0; i < files.size(); i++) {
      Path f = files.get(i);
      Summaries.Scan scan = Summaries.scan(f, ExportFormat.detect(f), ImportProgress.NONE, i);
      summaries.add(scan.summary());
      ranks.addAll(scan.ranks());
      transfers.addAll(scan.transfers());
    }
    ranks.sort(CollectiveAnalysis.RANK_ORDER);
    CollectiveSummary collectives = ranks.size() < 2 ? null : CollectiveAnalysis.summarize(ranks);
    return new GpuSummaries(
        summaries, collectives, KvTransferAnalysis.summarize(ranks, collectives, transfers));
  }

  /**
   * One file: its {@link GpuSummary#toJson()}, with {@code "collectives":{…}} added when its ranks
   * ran collectives; several: {@code {"files":[…],"collectives":{…}|null}}. Either way {@code
   * "kv_transfers":[…]} follows when there are any.
   */
  public String toJson() {
    String kv = kvTransfers == null ? "" : ",\"kv_transfers\":" + kvTransfers.toJson();
    if (files.size() == 1) {
      String one = files.get(0).toJson();
      return collectives == null && kv.isEmpty()
          ? one
          : one.substring(0, one.length() - 1)
              + (collectives == null ? "" : ",\"collectives\":" + collectives.toJson())
              + kv
              + "}";
    }
    StringBuilder b = new StringBuilder("{\"files\":[");
    for (int i = 0; i < files.size(); i++) {
      b.append(i == 0 ? "" : ",").append(files.get(i).toJson());
    }
    return b.append("],\"collectives\":")
        .append(collectives == null ? "null" : collectives.toJson())
        .append(kv)
        .append('}')
        .toString();
  }
}
