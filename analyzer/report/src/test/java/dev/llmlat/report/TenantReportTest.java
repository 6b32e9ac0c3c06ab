package dev.llmlat.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.llmlat.analyze.Attribution;
import dev.llmlat.analyze.QueueBreakdown;
import dev.llmlat.analyze.UpstreamConnection;
import dev.llmlat.analyze.store.AttributionWriter;
import dev.llmlat.home.EngineLibrary;
import dev.llmlat.schema.SchemaMigrator;
import dev.llmlat.store.EmbeddedClickHouse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code report --by tenant} over rows written as {@code analyze} writes them. Tenant "chat": 20 requests, each queued
 * 40 ms and 10 ms of batch interference, of which "batch" caused 30 ms and "chat" itself 5 ms; 4 of them over the 100
 * ms SLO. Tenant "batch": 5 requests, 10 ms queued, nobody in its way. So chat's row reads 30/50 = 60% batch, 10% chat.
 */
class TenantReportTest {
  static final long MS = 1_000_000L;
  @TempDir Path dir;

  private static Attribution row(int n, String tenant, long ttftMs, long queueMs, long interferenceMs,
      List<Attribution.TenantShare> causes) {
    Map<String, Long> c = new LinkedHashMap<>();
    Attribution.COMPONENTS.forEach(k -> c.put(k, 0L));
    c.put("queue", queueMs * MS);
    c.put("batch_interference", interferenceMs * MS);
    c.put("prefill_gpu", (ttftMs - queueMs - interferenceMs) * MS);
    return new Attribution(String.format("%032x", n), "r" + n, "m", "engine", "i", "scheduler-sdk", 1_795_000_000_000_000_000L + n * MS,
        "engine", ttftMs * MS, ttftMs * MS, c, List.of(), List.of(), List.of(), 10, 10, 1, 0, List.of(), QueueBreakdown.NONE,
        List.of(), List.of(), UpstreamConnection.UNKNOWN, tenant, causes);
  }

  @Test
  void perTenantFiguresAndTheInterferenceMatrix() throws Exception {
    List<Attribution> rows = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      rows.add(row(i, "chat", i < 4 ? 150 : 80, 40, 10,
          List.of(new Attribution.TenantShare("batch", 30 * MS), new Attribution.TenantShare("chat", 5 * MS))));
    }
    for (int i = 0; i < 5; i++) {
      rows.add(row(100 + i, "batch", 60, 10, 0, List.of()));
    }
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      AttributionWriter.write(store, rows, "test");
      TenantReport r = TenantReport.load(store, 0, 100 * MS);
      assertThat(r.tenants()).extracting(TenantReport.Tenant::name).containsExactly("chat", "batch");
      TenantReport.Tenant chat = r.tenants().get(0);
      assertThat(chat.requests()).isEqualTo(20);
      assertThat(chat.violations()).isEqualTo(4);
      // type-7 p90 of 16 x 80 ms and 4 x 150 ms: rank 0.9 * 19 = 17.1, between the 18th and 19th sorted values (150, 150)
      assertThat(chat.p90Ns()).isCloseTo(150 * MS, within(1.0));
      assertThat(chat.p50Ns()).isCloseTo(80 * MS, within(1.0));
      assertThat(chat.violationRate().low()).isLessThan(0.2).isGreaterThan(0.0);
      // mean prefill_gpu (16 x 30 ms + 4 x 100 ms) / 20 = 44 ms beats the queue's 40 ms
      assertThat(chat.largest()).isEqualTo("prefill_gpu");
      assertThat(r.tenants().get(1).largest()).isEqualTo("prefill_gpu"); // 50 ms against 10 ms queued
      assertThat(r.matrix().get("chat")).containsOnlyKeys("batch", "chat");
      assertThat(r.matrix().get("chat").get("batch")).isCloseTo(0.6, within(1e-9));
      assertThat(r.matrix().get("chat").get("chat")).isCloseTo(0.1, within(1e-9));
      assertThat(r.matrix().get("batch")).isEmpty();
      java.io.StringWriter text = new java.io.StringWriter();
      r.printText(new java.io.PrintWriter(text));
      assertThat(text.toString()).contains("interference").containsPattern("chat\\s+20\\s+80\\.000");
      assertThat(r.json()).contains("\"interference\"");
      assertThat(r.html()).contains("<table id=\"interference\">");
    }
  }
}
