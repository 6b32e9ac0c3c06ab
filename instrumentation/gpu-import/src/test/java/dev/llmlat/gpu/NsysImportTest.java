package dev.llmlat.gpu;

import static dev.llmlat.gpu.ImportFixtures.attr;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.nvtx.NvtxPattern;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class NsysImportTest {
  private static final Pattern H200_TEXT =
      Pattern.compile("(prefill|decode) [0-9a-f]{32}(,[0-9a-f]{32})*");

  static long count(Connection c, String sql) throws Exception {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getLong(1) : 0;
    }
  }

  static boolean hasTable(Connection c, String t) throws Exception {
    return count(c, "SELECT count(*) FROM sqlite_master WHERE name = '" + t + "'") > 0;
  }

  static long rows(Connection c, String t) throws Exception {
    return hasTable(c, t) ? count(c, "SELECT count(*) FROM " + t) : 0;
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "public/nsys__extrap_con_kernel.sqlite",
        "public/nsys__extrap_concurrent_profile1.sqlite",
        "public/nsys__extrap_ex-gpu.s10_oldschema.sqlite",
        "public/nsys__pipit_cloverleaf-cuda_perlmutter.sqlite",
        "public/nsys__pipit_saxpy-mpi-cuda_perlmutter0.sqlite",
        "h200-tinylm/nsys/nsys_b.sqlite",
        "h200-e2e/engine.sqlite"
      })
  void importsEveryActivityWithCountsFromSql(String name) throws Exception {
    Path file = ImportFixtures.file(name);
    ImportFixtures.Collector sink = new ImportFixtures.Collector();
    ImportReport report =
        GpuImporter.importFile(file, ImportOptions.defaults().withBatchSize(500), sink);

    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file)) {
      long kernels = rows(c, "CUPTI_ACTIVITY_KIND_KERNEL");
      long memcpys = rows(c, "CUPTI_ACTIVITY_KIND_MEMCPY");
      long memsets = rows(c, "CUPTI_ACTIVITY_KIND_MEMSET");
      assertThat(report.format()).isEqualTo(ExportFormat.NSYS_SQLITE);
      assertThat(report.kernels()).isEqualTo(kernels);
      assertThat(report.memcpys()).isEqualTo(memcpys);
      assertThat(report.memsets()).isEqualTo(memsets);

      long ranges = 0;
      long steps = 0;
      java.util.Set<String> requests = new java.util.HashSet<>();
      if (hasTable(c, "NVTX_EVENTS")) {
        ranges =
            count(
                c,
                "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL");
        try (Statement st = c.createStatement();
            ResultSet rs =
                st.executeQuery(
                    "SELECT COALESCE(n.text, s.value) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId"
                        + " WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL")) {
          while (rs.next()) {
            String text = rs.getString(1);
            if (text != null && H200_TEXT.matcher(text).matches()) {
              steps++;
              requests.addAll(List.of(text.substring(text.indexOf(' ') + 1).split(",")));
            }
          }
        }
      }
      assertThat(report.ranges()).isEqualTo(ranges);
      assertThat(report.stepsMatched()).isEqualTo(steps);
      assertThat(report.requestsMatched()).isEqualTo(requests.size());
      assertThat(report.spans()).isEqualTo(kernels + memcpys + memsets + steps);
      assertThat(sink.spans).hasSize((int) report.spans());
      assertThat(sink.batches).allSatisfy(b -> assertThat(b.spanCount()).isLessThanOrEqualTo(500));
      assertThat(report.batches()).isEqualTo(sink.batches.size());

      boolean sessionStart = hasTable(c, "TARGET_INFO_SESSION_START_TIME");
      long offset =
          sessionStart ? count(c, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME") : 0;
      assertThat(report.clockRule())
          .startsWith(
              sessionStart
                  ? "nsys:TARGET_INFO_SESSION_START_TIME.utcEpochNs+start"
                  : "nsys:start (no TARGET_INFO_SESSION_START_TIME");
      if (kernels > 0) {
        long firstKernel = count(c, "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL") + offset;
        assertThat(
                sink.spans.stream()
                    .filter(s -> "kernel".equals(attr(s, LlmlatAttributes.GPU_KIND)))
                    .mapToLong(Span::getStartTimeUnixNano)
                    .min()
                    .getAsLong())
            .isEqualTo(firstKernel);
      }

      // Unattributed: no NVTX -> all, for the reason "no ranges"; kernels without a runtime row ->
      // no launch record.
      long activities = kernels + memcpys + memsets;
      if (ranges == 0) {
        assertThat(report.unattributed())
            .containsExactly(Map.entry(UnattributedReason.NO_RANGES_IN_EXPORT, activities));
      } else if (steps == 0) {
        assertThat(report.unattributed())
            .containsEntry(UnattributedReason.NO_RANGE_MATCHED_PATTERN, activities);
      }
      long unattributedSpans =
          sink.spans.stream()
              .filter(
                  s -> attr(s, LlmlatAttributes.GPU_KIND) != null && s.getParentSpanId().isEmpty())
              .count();
      assertThat(report.unattributedTotal()).isEqualTo(unattributedSpans);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"public/nsys__extrap_con_kernel.sqlite"})
  void kernelsWithoutRuntimeRowAreNamedAsSuch(String name) throws Exception {
    Path file = ImportFixtures.file(name);
    ImportReport report =
        GpuImporter.importFile(
            file,
            ImportOptions.defaults().withPattern(NvtxPattern.regex("(?<traces>[0-9a-f]{32})")),
            b -> {});
    // No NVTX table: every activity is unattributed for that reason, the 2 runtime-less kernels
    // included.
    assertThat(report.unattributed()).containsOnlyKeys(UnattributedReason.NO_RANGES_IN_EXPORT);
  }

  @ParameterizedTest
  @ValueSource(strings = {"h200-tinylm/nsys/nsys_b.sqlite", "h200-e2e/engine.sqlite"})
  void h200StepsJoinRequestsInArrivalOrder(String name) throws Exception {
    Path file = ImportFixtures.file(name);
    ImportFixtures.Collector sink = new ImportFixtures.Collector();
    ImportReport report = GpuImporter.importFile(file, ImportOptions.defaults(), sink);
    Path requestsFile = file.resolveSibling("requests.jsonl");
    H200Join.assertJoin(sink.spans, requestsFile, report);

    // Kernel spans: parent and trace are their step's; busy is the union of the step's own
    // activities.
    Map<String, Span> steps =
        sink.spans.stream()
            .filter(s -> s.getName().equals("step"))
            .collect(Collectors.toMap(s -> hex(s.getSpanId().toByteArray()), s -> s));
    Map<String, List<long[]>> byStep = new HashMap<>();
    for (Span s : sink.spans) {
      if (attr(s, LlmlatAttributes.GPU_KIND) != null && !s.getParentSpanId().isEmpty()) {
        String parent = hex(s.getParentSpanId().toByteArray());
        assertThat(steps).containsKey(parent);
        assertThat(s.getTraceId()).isEqualTo(steps.get(parent).getTraceId());
        assertThat(attr(s, LlmlatAttributes.STEP_SPAN_ID)).isEqualTo(parent);
        assertThat(attr(s, LlmlatAttributes.TRACE_IDS))
            .as("requests are the step's links, not on each kernel")
            .isNull();
        byStep
            .computeIfAbsent(parent, k -> new ArrayList<>())
            .add(new long[] {s.getStartTimeUnixNano(), s.getEndTimeUnixNano()});
      }
    }
    assertThat(byStep).hasSize(steps.size());
    byStep.forEach(
        (id, intervals) -> {
          Span step = steps.get(id);
          assertThat(Long.parseLong(attr(step, LlmlatAttributes.GPU_BUSY_NS)))
              .isEqualTo(ImportFixtures.union(intervals));
          assertThat(step.getStartTimeUnixNano())
              .isEqualTo(intervals.stream().mapToLong(i -> i[0]).min().getAsLong());
          assertThat(step.getEndTimeUnixNano())
              .isEqualTo(intervals.stream().mapToLong(i -> i[1]).max().getAsLong());
        });
    // Warm-up kernels before the first range are imported, unattributed, for that reason.
    assertThat(report.unattributed())
        .containsOnlyKeys(UnattributedReason.LAUNCHED_OUTSIDE_MATCHING_RANGE);
  }

  static String hex(byte[] b) {
    return java.util.HexFormat.of().formatHex(b);
  }
}
