package dev.llmlat.report.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.ServedRequests;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sides read from a real store: gateway and engine spans imported through the OTLP/JSON import path
 * and attributed by the analyzer, then selected by arrival window, model and a resource attribute
 * of the requests' spans.
 */
class SampleLoaderTest {
  static final long S = 1_000_000_000L;
  static final long BASE = 1_795_970_300_000_000_000L;
  static final String MODEL = "meta-llama/Llama-3.1-8B-Instruct";
  static final int QUEUE = TtftComponent.QUEUE.ordinal();

  @TempDir static Path dir;
  static EmbeddedClickHouse store;
  static List<ServedRequests.Request> before;
  static List<ServedRequests.Request> after;
  static List<ServedRequests.Request> otherModel;
  static List<ServedRequests.Request> both;

  @BeforeAll
  static void importAndAnalyze() throws IOException {
    // 1.4.0 from BASE; 1.5.0 from BASE + 10 s, queued 40 ms longer; another model among the
    // 1.4.0 requests; at BASE + 20 s requests whose engine says 1.5.0 and whose gateway 1.4.0
    before =
        ServedRequests.generate(
            1, 30, BASE, 50_000_000L, 0, 0.1, Map.of("service.version", "1.4.0"));
    after =
        ServedRequests.generate(
            2,
            30,
            BASE + 10 * S,
            50_000_000L,
            40_000_000L,
            0.1,
            Map.of("service.version", "1.5.0"));
    otherModel =
        ServedRequests.generate(
                3, 5, BASE + S / 4, 100_000_000L, 0, 0, Map.of("service.version", "1.4.0"))
            .stream()
            .map(r -> r.withModel("Qwen/Qwen3-8B"))
            .toList();
    both =
        ServedRequests.generate(4, 5, BASE + 20 * S, 50_000_000L, 0, 0, Map.of()).stream()
            .map(
                r ->
                    r.withResources(
                        Map.of("service.version", "1.5.0"), Map.of("service.version", "1.4.0")))
            .toList();
    List<ServedRequests.Request> all = new ArrayList<>(before);
    all.addAll(after);
    all.addAll(otherModel);
    all.addAll(both);
    Path file = dir.resolve("spans.otlp.jsonl");
    Files.write(file, ServedRequests.otlpJson(all));
    store = EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate());
    SchemaMigrator.bundled().migrate(store);
    try (StoreImportTarget target = new StoreImportTarget(store)) {
      GpuImporter.importFile(file, ExportFormat.OTLP_JSON, ImportOptions.defaults(), target);
      target.commit();
    }
    assertThat(new Analyzer(store).analyze(0, Long.MAX_VALUE / 2, true).written())
        .isEqualTo(all.size());
  }

  @AfterAll
  static void close() {
    store.close();
  }

  static List<Long> ttfts(Sample s) {
    return IntStream.range(0, s.size()).mapToObj(s::ttftNs).sorted().toList();
  }

  static List<Long> ttfts(List<ServedRequests.Request> requests) {
    return requests.stream().map(ServedRequests.Request::ttftNs).sorted().toList();
  }

  @Test
  void aWindowHoldsTheRequestsThatArrivedInItAsAttributed() {
    Sample a = SampleLoader.load(store, new Selection("before", BASE, BASE + 10 * S, "", null));
    List<ServedRequests.Request> expected = new ArrayList<>(before);
    expected.addAll(otherModel);
    assertThat(a.label()).isEqualTo("before");
    assertThat(ttfts(a)).isEqualTo(ttfts(expected));
    List<Long> queues =
        IntStream.range(0, a.size()).mapToObj(r -> a.componentNs(QUEUE, r)).sorted().toList();
    assertThat(queues)
        .isEqualTo(expected.stream().map(ServedRequests.Request::queueNs).sorted().toList());
    // eight gaps each; the stalled ones have a 40 ms gap, a slow step for want of step spans
    for (int r = 0; r < a.size(); r++) {
      assertThat(a.itlCount(r)).isEqualTo(8);
      assertThat(a.stallKind(r)).isIn("", "slow step");
      assertThat(a.stallKind(r).isEmpty()).isEqualTo(a.itlStalls(r) == 0);
    }
    long stalled = IntStream.range(0, a.size()).filter(r -> a.itlStalls(r) > 0).count();
    assertThat(stalled)
        .isEqualTo(
            expected.stream()
                .filter(q -> java.util.Arrays.stream(q.gapsNs()).anyMatch(g -> g == 40_000_000L))
                .count());

    Sample b =
        SampleLoader.load(store, new Selection("after", BASE + 10 * S, BASE + 20 * S, "", null));
    assertThat(ttfts(b)).isEqualTo(ttfts(after));
  }

  @Test
  void aModelNarrowsTheSide() {
    Sample a = SampleLoader.load(store, new Selection("before", BASE, BASE + 10 * S, MODEL, null));
    assertThat(ttfts(a)).isEqualTo(ttfts(before));
    Sample other = SampleLoader.load(store, Selection.all("other", "Qwen/Qwen3-8B"));
    assertThat(ttfts(other)).isEqualTo(ttfts(otherModel));
  }

  @Test
  void anAttributeOfTheRequestsSpansSelectsASideAndRequestsWithBothValuesAreLeftOut() {
    Selection.AttributeMatch newer =
        new Selection.AttributeMatch("service.version", "1.5.0", "1.4.0");
    Selection.AttributeMatch older =
        new Selection.AttributeMatch("service.version", "1.4.0", "1.5.0");
    Sample b =
        SampleLoader.load(
            store, new Selection("1.5.0", Selection.ALL_FROM, Selection.ALL_TO, "", newer));
    assertThat(ttfts(b)).isEqualTo(ttfts(after));
    List<ServedRequests.Request> olderRequests = new ArrayList<>(before);
    olderRequests.addAll(otherModel);
    Sample a =
        SampleLoader.load(
            store, new Selection("1.4.0", Selection.ALL_FROM, Selection.ALL_TO, "", older));
    assertThat(ttfts(a)).isEqualTo(ttfts(olderRequests));
    assertThat(
            SampleLoader.ambiguous(
                store, new Selection("1.5.0", Selection.ALL_FROM, Selection.ALL_TO, "", newer)))
        .isEqualTo(both.size());
    // with a window and a model too
    Sample narrowed =
        SampleLoader.load(store, new Selection("1.4.0", BASE, BASE + 5 * S, MODEL, older));
    assertThat(ttfts(narrowed)).isEqualTo(ttfts(before));
    assertThat(
            SampleLoader.load(store, new Selection("none", BASE, BASE + 5 * S, "", newer)).size())
        .isZero();
  }
}
