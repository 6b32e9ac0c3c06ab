package dev.llmlat.analyze.store;

import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.ClockCorrection;
import dev.llmlat.attribution.QueueBreakdown;
import dev.llmlat.attribution.UpstreamConnection;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.stats.Quantiles;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.RowBinaryWriter;
import java.util.Arrays;
import java.util.List;

/**
 * Writes attributions as rows of {@code llm_request_attribution} (a re-run replaces a request's
 * row).
 */
public final class AttributionWriter {
  static final String TABLE = "llm_request_attribution";
  static final List<String> COLUMNS =
      java.util.stream.Stream.of(
              List.of(
                  "TraceId",
                  "RequestId",
                  "Model",
                  "ServiceName",
                  "EngineInstance",
                  "EngineAdapter",
                  "ArrivalTime",
                  "TtftStartLayer",
                  "TtftNs",
                  "ServerTtftNs"),
              TtftComponent.all().stream().map(TtftComponent::column).toList(),
              List.of(
                  "PromptTokens",
                  "OutputTokens",
                  "PrefillChunks",
                  "Preemptions",
                  "ItlCount",
                  "ItlP50Ns",
                  "ItlP99Ns",
                  "ItlMaxNs",
                  "ItlStalls",
                  "TopStallCause",
                  "ClockCorrections",
                  "ClockUncertaintyNs",
                  "AnalyzerVersion",
                  "AnalyzedAt"),
              List.of(
                  "QueueCauseKind",
                  "QueueCause",
                  "QueueCauseNs",
                  "QueueCauseTraceId",
                  "QueueCauseTokens",
                  "QueueCauseBatch",
                  "QueueLimit"),
              List.of(
                  "UpstreamClient",
                  "UpstreamPool",
                  "UpstreamPoolMax",
                  "UpstreamPoolPending",
                  "UpstreamConnection"),
              List.of("Tenant", "TenantCause", "TenantCauseNs"),
              List.of(
                  "PartComponent",
                  "PartInstance",
                  "PartRole",
                  "PartNs",
                  "LateRank",
                  "LateRankDevice",
                  "LateRankNs",
                  "LateRankSteps"))
          .flatMap(List::stream)
          .toList();

  private AttributionWriter() {}

  public static void write(ClickHouseStore store, List<Attribution> attributions, String version) {
    insert(store, rows(attributions, version));
  }

  /** Inserts rows that {@link #rows} encoded (nothing when there are none). */
  static void insert(ClickHouseStore store, byte[] rows) {
    if (rows.length > 0) {
      store.insertRowBinary(TABLE, COLUMNS, rows, null);
    }
  }

  /**
   * The attributions as RowBinary rows of {@link #COLUMNS}, analyzed now (empty when there are
   * none).
   */
  static byte[] rows(List<Attribution> attributions, String version) {
    if (attributions.isEmpty()) {
      return new byte[0];
    }
    long now = System.currentTimeMillis();
    // rows encoded in slices on all cores (a chunk holds tens of thousands), then joined in order
    int slices = Math.min(8, Math.max(1, attributions.size() / 2048));
    List<RowBinaryWriter> parts =
        java.util.stream.IntStream.range(0, slices)
            .parallel()
            .mapToObj(
                i ->
                    encode(
                        attributions.subList(
                            i * attributions.size() / slices,
                            (i + 1) * attributions.size() / slices),
                        version,
                        now))
            .toList();
    RowBinaryWriter out = new RowBinaryWriter(parts.stream().mapToInt(RowBinaryWriter::size).sum());
    parts.forEach(out::append);
    return out.toByteArray();
  }

  private static RowBinaryWriter encode(List<Attribution> attributions, String version, long now) {
    RowBinaryWriter out = new RowBinaryWriter(attributions.size() * 320);
    for (Attribution a : attributions) {
      out.string(a.traceId())
          .string(a.requestId())
          .string(a.model())
          .string(a.service())
          .string(a.engineInstance())
          .string(a.engineAdapter())
          .int64(a.arrivalNs())
          .string(a.startLayer())
          .int64(a.ttftNs())
          .int64(a.serverTtftNs());
      for (TtftComponent c : TtftComponent.all()) {
        out.int64(a.component(c));
      }
      long[] gaps = a.gapsNs();
      long[] sorted = gaps.clone();
      Arrays.sort(sorted);
      long stalls = a.itl().stream().filter(g -> !g.cause().isEmpty()).count();
      out.uint32(a.promptTokens())
          .uint32(a.outputTokens())
          .uint16(a.prefillChunks())
          .uint16(a.preemptions())
          .uint32(gaps.length)
          .int64(quantile(sorted, 0.5))
          .int64(quantile(sorted, 0.99))
          .int64(sorted.length == 0 ? 0 : sorted[sorted.length - 1])
          .uint32(stalls)
          .string(topCause(a));
      List<ClockCorrection> applied =
          a.corrections().stream().filter(ClockCorrection::applied).toList();
      out.varUInt(applied.size());
      for (ClockCorrection c : applied) {
        out.string(c.host()).int64(c.offsetAt(a.arrivalNs()));
      }
      out.int64(a.corrections().stream().mapToLong(ClockCorrection::uncertaintyNs).max().orElse(0))
          .string(version)
          .int64(now);
      queue(out, a.queueBreakdown());
      UpstreamConnection u = a.upstream();
      out.string(u.client())
          .string(u.pool())
          .int32((int) Math.max(-1, Math.min(Integer.MAX_VALUE, u.poolMax())))
          .int32((int) Math.max(-1, Math.min(Integer.MAX_VALUE, u.pending())))
          .string(u.connection());
      out.string(a.tenant()).arrayLength(a.tenantCauses().size());
      a.tenantCauses().forEach(t -> out.string(t.tenant()));
      out.arrayLength(a.tenantCauses().size());
      a.tenantCauses().forEach(t -> out.int64(t.ns()));
      parts(out, a);
    }
    return out;
  }

  /** The queue breakdown as parallel arrays, one element per part. */
  private static void queue(RowBinaryWriter out, QueueBreakdown q) {
    List<QueueBreakdown.Part> parts = q.parts();
    out.arrayLength(parts.size());
    parts.forEach(p -> out.string(p.kind()));
    out.arrayLength(parts.size());
    parts.forEach(p -> out.string(p.cause()));
    out.arrayLength(parts.size());
    parts.forEach(p -> out.int64(p.ns()));
    out.arrayLength(parts.size());
    parts.forEach(p -> out.string(p.traceId()));
    out.arrayLength(parts.size());
    parts.forEach(p -> out.uint32(Math.min(p.tokens(), 0xFFFF_FFFFL)));
    out.arrayLength(parts.size());
    parts.forEach(p -> out.uint32(p.batch()));
    out.string(q.limit());
  }

  /** A disaggregated request's components per instance, and the late ranks, as parallel arrays. */
  private static void parts(RowBinaryWriter out, Attribution a) {
    List<Attribution.InstancePart> parts = a.instanceParts();
    out.arrayLength(parts.size());
    parts.forEach(p -> out.string(p.component()));
    out.arrayLength(parts.size());
    parts.forEach(p -> out.string(p.instance()));
    out.arrayLength(parts.size());
    parts.forEach(p -> out.string(p.role()));
    out.arrayLength(parts.size());
    parts.forEach(p -> out.int64(p.ns()));
    List<Attribution.RankWait> ranks = a.rankWaits();
    out.arrayLength(ranks.size());
    ranks.forEach(r -> out.string(r.rank()));
    out.arrayLength(ranks.size());
    ranks.forEach(r -> out.string(r.device()));
    out.arrayLength(ranks.size());
    ranks.forEach(r -> out.int64(r.waitNs()));
    out.arrayLength(ranks.size());
    ranks.forEach(r -> out.uint32(r.steps()));
  }

  /** The cause of the longest named gap. */
  static String topCause(Attribution a) {
    return a.itl().stream()
        .filter(g -> !g.cause().isEmpty())
        .max((x, y) -> Long.compare(x.gapNs(), y.gapNs()))
        .map(Attribution.Gap::cause)
        .orElse("");
  }

  /** A quantile of the gaps in whole nanoseconds, 0 when there are none. */
  private static long quantile(long[] sorted, double q) {
    return sorted.length == 0 ? 0 : Math.round(Quantiles.ofSorted(sorted, q));
  }
}
