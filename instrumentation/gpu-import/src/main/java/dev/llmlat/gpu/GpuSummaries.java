package dev.llmlat.gpu;

import dev.llmlat.gpu.internal.CollectiveAnalysis;
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
 */
public record GpuSummaries(List<GpuSummary> files, CollectiveSummary collectives) {
  public GpuSummaries {
    files = List.copyOf(files);
  }

  /** Each file's format is detected from its content; each file is a clock domain of its own. */
  public static GpuSummaries of(List<Path> files) throws IOException {
    List<GpuSummary> summaries = new ArrayList<>();
    List<RankTimeline> ranks = new ArrayList<>();
    for (int i = 0; i < files.size(); i++) {
      Path f = files.get(i);
      Summaries.Scan scan = Summaries.scan(f, ExportFormat.detect(f), ImportProgress.NONE, i);
      summaries.add(scan.summary());
      ranks.addAll(scan.ranks());
    }
    ranks.sort(CollectiveAnalysis.RANK_ORDER);
    return new GpuSummaries(summaries, ranks.size() < 2 ? null : CollectiveAnalysis.summarize(ranks));
  }

  /**
   * One file: its {@link GpuSummary#toJson()}, with {@code "collectives":{…}} added when its ranks
   * ran collectives; several: {@code {"files":[…],"collectives":{…}|null}}.
   */
  public String toJson() {
    if (files.size() == 1) {
      String one = files.get(0).toJson();
      return collectives == null ? one
          : one.substring(0, one.length() - 1) + ",\"collectives\":" + collectives.toJson() + "}";
    }
    StringBuilder b = new StringBuilder("{\"files\":[");
    for (int i = 0; i < files.size(); i++) {
      b.append(i == 0 ? "" : ",").append(files.get(i).toJson());
    }
    return b.append("],\"collectives\":").append(collectives == null ? "null" : collectives.toJson()).append('}')
        .toString();
  }
}
