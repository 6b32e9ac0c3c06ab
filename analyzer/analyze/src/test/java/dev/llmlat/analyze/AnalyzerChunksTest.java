package dev.llmlat.analyze;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.analyze.enginetraces.RequestTruth;
import dev.llmlat.analyze.enginetraces.SglangTraceWriter;
import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.QueryResult;
import dev.llmlat.store.schema.SchemaMigrator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ../shared/traces/h200-e2e (the real gateway's spans, SGLang's engine spans with their steps)
 * attributed in one chunk and in chunks of 3 requests, which the analyzer reads, attributes and
 * writes overlapped: the same attribution for every request, each handed on once, and only once its
 * row is in the store (inserts made slow, so that a hand-over before its write would find no row).
 */
class AnalyzerChunksTest {
  @TempDir Path dir;

  @Test
  void chunksAttributedOverlappedGiveTheAttributionsOfOneChunk() throws IOException {
    List<RequestTruth> truths = H200EnginesTest.truths();
    Path engine = dir.resolve("sglang.otlp.jsonl");
    Files.write(engine, new SglangTraceWriter().write(truths, "h200"));
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      for (Path file :
          List.of(
              dev.llmlat.sharedtraces.SharedTraces.resolve("h200-e2e")
                  .resolve("gateway.otlp.jsonl"),
              engine)) {
        try (StoreImportTarget target = new StoreImportTarget(store)) {
          GpuImporter.importFile(file, ExportFormat.OTLP_JSON, ImportOptions.defaults(), target);
          target.commit();
        }
      }
      Map<String, Attribution> whole = new LinkedHashMap<>();
      new Analyzer(store, truths.size())
          .analyze(0, Long.MAX_VALUE / 2, true, a -> whole.put(a.traceId(), a));
      assertThat(whole).hasSize(truths.size());

      store.execute("TRUNCATE TABLE llm_request_attribution");
      List<Attribution> handed = new ArrayList<>();
      List<String> rowsAtHandOver = new ArrayList<>();
      Analyzer.Summary chunked =
          new Analyzer(new SlowInserts(store), 3)
              .analyze(
                  0,
                  Long.MAX_VALUE / 2,
                  true,
                  a -> {
                    handed.add(a);
                    rowsAtHandOver.add(
                        store
                            .query(
                                "SELECT toString(count()) FROM llm_request_attribution WHERE TraceId = {t:String}"
                                    + " AND TtftNs = {ttft:Int64}",
                                Map.of("t", a.traceId(), "ttft", a.ttftNs()))
                            .single());
                  });

      assertThat(chunked.written()).isEqualTo(truths.size());
      assertThat(handed)
          .extracting(Attribution::traceId)
          .doesNotHaveDuplicates()
          .containsExactlyInAnyOrderElementsOf(whole.keySet());
      for (Attribution a : handed) {
        assertThat(a).as(a.traceId()).isEqualTo(whole.get(a.traceId()));
      }
      assertThat(rowsAtHandOver)
          .as("rows of each attribution when it was handed on")
          .containsOnly("1");
      assertThat(store.query("SELECT toString(count()) FROM llm_request_attribution").single())
          .isEqualTo(Integer.toString(truths.size()));
    }
  }

  /** The store with every insert held back a while before it is made. */
  private record SlowInserts(ClickHouseStore store) implements ClickHouseStore {
    @Override
    public void execute(String sql) {
      store.execute(sql);
    }

    @Override
    public QueryResult query(String sql, Map<String, ?> params) {
      return store.query(sql, params);
    }

    @Override
    public byte[] queryRowBinary(String sql, Map<String, ?> params) {
      return store.queryRowBinary(sql, params);
    }

    @Override
    public void insertRowBinary(
        String table, List<String> columns, byte[] rows, String deduplicationToken) {
      try {
        Thread.sleep(300);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      store.insertRowBinary(table, columns, rows, deduplicationToken);
    }

    @Override
    public String description() {
      return store.description();
    }

    @Override
    public void close() {
      // the test closes the store it wraps
    }
  }
}
