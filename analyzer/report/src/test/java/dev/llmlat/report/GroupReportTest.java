package dev.llmlat.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.llmlat.analyze.store.AttributionWriter;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code report --by tenant} over rows written as {@code analyze} writes them. Tenant "chat": 20
 * requests, each queued 40 ms and 10 ms of batch interference, of which "batch" caused 30 ms and
 * "chat" itself 5 ms; 4 of them over the 100 ms SLO. Tenant "batch": 5 requests, 10 ms queued,
 * nobody in its way. So chat's row reads 30/50 = 60% batch, 10% chat.
 */
class GroupReportTest {
  static final long MS = 1_000_000L;
  @TempDir Path dir;

  private static Attribution row(
      int n,
      String tenant,
      long ttftMs,
      long queueMs,
      long interferenceMs,
      List<Attribution.TenantShare> causes) {
    return row(n, tenant, ttftMs, queueMs, interferenceMs, causes, List.of(), List.of());
  }

  private static Attribution row(
      int n,
      String tenant,
      long ttftMs,
      long queueMs,
      long interferenceMs,
      List<Attribution.TenantShare> causes,
      List<Attribution.InstancePart> parts,
      List<Attribution.RankWait> ranks) {
    Map<String, Long> c = new LinkedHashMap<>();
    TtftComponent.all().forEach(k -> c.put(k.id(), 0L));
    c.put("queue", queueMs * MS);
    c.put("batch_interference", interferenceMs * MS);
    long rankWait = ranks.stream().mapToLong(Attribution.RankWait::waitNs).sum();
    c.put("rank_wait", rankWait);
    c.put("prefill_gpu", (ttftMs - queueMs - interferenceMs) * MS - rankWait);
    return Attribution.builder()
        .traceId(String.format("%032x", n))
        .requestId("r" + n)
        .model("m")
        .service("engine")
        .engineInstance("i")
        .engineAdapter("scheduler-sdk")
        .arrivalNs(1_795_000_000_000_000_000L + n * MS)
        .ttftNs(ttftMs * MS)
        .serverTtftNs(ttftMs * MS)
        .components(c)
        .promptTokens(10)
        .outputTokens(10)
        .prefillChunks(1)
        .instanceParts(parts)
        .rankWaits(ranks)
        .tenant(tenant)
        .tenantCauses(causes)
        .build();
  }

  @Test
  void disaggregatedRequestsPerInstanceAndTheLateRanks() throws Exception {
    List<Attribution> rows = new ArrayList<>();
    for (int i = 0;
        i < 3;
        i++) { // prefill on p-0, decode on d-0: queue 10 ms on p-0, decode_wait 5 ms on d-0, KV 2
      // ms between
      rows.add(
          row(
              i,
              "",
              100,
              10,
              0,
              List.of(),
              List.of(
                  new Attribution.InstancePart("queue", "p-0", "prefill", 10 * MS),
                  new Attribution.InstancePart("decode_wait", "d-0", "decode", 5 * MS),
                  new Attribution.InstancePart("kv_transfer", "p-0 -> d-0", "transfer", 2 * MS)),
              List.of()));
    }
    // two TP requests that waited for rank 1, 30 and 12 ms over 2 and 1 steps; one on rank 0 for 4
    // ms
    rows.add(
        row(
            10,
            "",
            100,
            0,
            0,
            List.of(),
            List.of(),
            List.of(new Attribution.RankWait("rank 1", "device 1, pid 9", 30 * MS, 2))));
    rows.add(
        row(
            11,
            "",
            100,
            0,
            0,
            List.of(),
            List.of(),
            List.of(
                new Attribution.RankWait("rank 1", "device 1, pid 9", 12 * MS, 1),
                new Attribution.RankWait("rank 0", "device 0, pid 8", 4 * MS, 1))));
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      AttributionWriter.write(store, rows, "test");
      InstanceParts parts =
          GroupReport.load(store, GroupReport.Dimension.INSTANCE, 0, 100 * MS).instanceParts();
      assertThat(parts.parts())
          .extracting(
              InstanceParts.Part::role,
              InstanceParts.Part::instance,
              InstanceParts.Part::component,
              InstanceParts.Part::ns,
              InstanceParts.Part::requests)
          .containsExactlyInAnyOrder(
              org.assertj.core.groups.Tuple.tuple("prefill", "p-0", "queue", 30 * MS, 3L),
              org.assertj.core.groups.Tuple.tuple("decode", "d-0", "decode_wait", 15 * MS, 3L),
              org.assertj.core.groups.Tuple.tuple(
                  "transfer", "p-0 -> d-0", "kv_transfer", 6 * MS, 3L));
      LateRanks ranks = LateRanks.load(store, 0);
      assertThat(ranks.requests()).isEqualTo(2);
      assertThat(ranks.waitNs()).isEqualTo(46 * MS);
      assertThat(ranks.ranks())
          .extracting(
              LateRanks.Rank::rank,
              LateRanks.Rank::ns,
              LateRanks.Rank::steps,
              LateRanks.Rank::requests)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple("rank 1", 42 * MS, 3L, 2L),
              org.assertj.core.groups.Tuple.tuple("rank 0", 4 * MS, 1L, 1L));
    }
  }

  @Test
  void diffSidesByWhatAttributionDecided() throws Exception {
    List<Attribution> rows = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      rows.add(row(i, i < 4 ? "chat" : "batch", 80, 20, 0, List.of()));
    }
    rows.add(
        row(
            50,
            "",
            100,
            0,
            0,
            List.of(),
            List.of(),
            List.of(new Attribution.RankWait("rank 1", "device 1", 7 * MS, 1))));
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      AttributionWriter.write(store, rows, "test");
      dev.llmlat.report.diff.Selection chat =
          new dev.llmlat.report.diff.Selection(
              "A",
              dev.llmlat.report.diff.Selection.ALL_FROM,
              dev.llmlat.report.diff.Selection.ALL_TO,
              "",
              new dev.llmlat.report.diff.Selection.AttributeMatch("tenant", "chat", "batch"));
      assertThat(dev.llmlat.report.diff.SampleLoader.load(store, chat).size()).isEqualTo(4);
      dev.llmlat.report.diff.Selection late =
          new dev.llmlat.report.diff.Selection(
              "B",
              dev.llmlat.report.diff.Selection.ALL_FROM,
              dev.llmlat.report.diff.Selection.ALL_TO,
              "",
              new dev.llmlat.report.diff.Selection.AttributeMatch("rank", "rank 1", "rank 0"));
      assertThat(dev.llmlat.report.diff.SampleLoader.load(store, late).size()).isEqualTo(1);
      assertThat(dev.llmlat.report.diff.SampleLoader.ambiguous(store, chat)).isZero();
    }
  }

  @Test
  void perTenantFiguresAndTheInterferenceMatrix() throws Exception {
    List<Attribution> rows = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      rows.add(
          row(
              i,
              "chat",
              i < 4 ? 150 : 80,
              40,
              10,
              List.of(
                  new Attribution.TenantShare("batch", 30 * MS),
                  new Attribution.TenantShare("chat", 5 * MS))));
    }
    for (int i = 0; i < 5; i++) {
      rows.add(row(100 + i, "batch", 60, 10, 0, List.of()));
    }
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      AttributionWriter.write(store, rows, "test");
      GroupReport r = GroupReport.load(store, GroupReport.Dimension.TENANT, 0, 100 * MS);
      assertThat(r.groups()).extracting(GroupReport.Group::name).containsExactly("chat", "batch");
      GroupReport.Group chat = r.groups().get(0);
      assertThat(chat.requests()).isEqualTo(20);
      assertThat(chat.violations()).isEqualTo(4);
      // type-7 p90 of 16 x 80 ms and 4 x 150 ms: rank 0.9 * 19 = 17.1, between the 18th and 19th
      // sorted values (150, 150)
      assertThat(chat.p90Ns()).isCloseTo(150 * MS, within(1.0));
      assertThat(chat.p50Ns()).isCloseTo(80 * MS, within(1.0));
      assertThat(chat.violationRate().low()).isLessThan(0.2).isGreaterThan(0.0);
      // mean prefill_gpu (16 x 30 ms + 4 x 100 ms) / 20 = 44 ms beats the queue's 40 ms
      assertThat(chat.largest()).isEqualTo("prefill_gpu");
      assertThat(r.groups().get(1).largest())
          .isEqualTo("prefill_gpu"); // 50 ms against 10 ms queued
      assertThat(r.matrix().get("chat")).containsOnlyKeys("batch", "chat");
      assertThat(r.matrix().get("chat").get("batch")).isCloseTo(0.6, within(1e-9));
      assertThat(r.matrix().get("chat").get("chat")).isCloseTo(0.1, within(1e-9));
      assertThat(r.matrix().get("batch")).isEmpty();
      java.io.StringWriter text = new java.io.StringWriter();
      r.printText(new java.io.PrintWriter(text));
      assertThat(text.toString())
          .contains("interference")
          .containsPattern("chat\\s+20\\s+80\\.000");
      assertThat(r.json()).contains("\"interference\"");
      assertThat(r.html()).contains("<table id=\"interference\">");
    }
  }
}
