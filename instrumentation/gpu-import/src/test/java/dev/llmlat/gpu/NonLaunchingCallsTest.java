package dev.llmlat.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.gpu.internal.NsysExport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Nsight importer skips runtime/driver calls named by {@link NsysExport#NON_LAUNCHING} when it
 * reads the launch calls. That is only safe if no such call ever has a kernel, memcpy or memset:
 * checked here on every real capture with a plain join in sqlite, independent of the importer.
 */
class NonLaunchingCallsTest {
  private static final String[] ACTIVITY_TABLES = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"
  };

  @Test
  void patternTakesQueriesAndGettersButNoLaunchOrCopy() {
    for (String name :
        List.of(
            "cuKernelGetAttribute",
            "cuKernelGetName",
            "cuKernelSetAttribute",
            "cuGetProcAddress_v2",
            "cudaStreamIsCapturing_v10000",
            "cudaGetDeviceProperties_v12000",
            "cudaGetFuncBySymbol_v11000",
            "cuLibraryGetKernel",
            "cudaEventCreateWithFlags_v3020",
            "cudaEventDestroy_v3020",
            "cudaEventQuery_v3020",
            "cudaStreamSynchronize_v3020",
            "cuModuleGetLoadingMode",
            "cudaStreamCreate_v3020",
            "cuDeviceGetLuid")) {
      assertThat(NsysExport.NON_LAUNCHING.matcher(name).lookingAt()).as(name).isTrue();
    }
    for (String name :
        List.of(
            "cudaLaunchKernel_v7000",
            "cudaLaunchKernel",
            "cuLaunchKernelEx",
            "cuLaunchKernel",
            "cudaLaunchKernelExC_v11060",
            "cudaLaunchCooperativeKernel_v9000",
            "cudaGraphLaunch_v10000",
            "cuGraphLaunch",
            "cudaMemcpyAsync_v3020",
            "cudaMemcpy_v3020",
            "cudaMemcpy2DAsync_v3020",
            "cudaMemcpyToSymbolAsync_v3020",
            "cuMemcpyHtoDAsync_v2",
            "cudaMemsetAsync_v3020",
            "cuMemsetD8Async",
            "cudaMemPrefetchAsync_v8000",
            "cudaMallocAsync_v11020",
            "cudaEventRecord_v3020",
            "cudaStreamWaitEvent_v3020")) {
      assertThat(NsysExport.NON_LAUNCHING.matcher(name).lookingAt()).as(name).isFalse();
    }
  }

  @Test
  void noActivityOfAnyRealCaptureWasLaunchedByASkippedCall() throws Exception {
    List<Path> exports;
    try (Stream<Path> s = Files.walk(ImportFixtures.root())) {
      exports = s.filter(p -> p.toString().endsWith(".sqlite")).sorted().toList();
    }
    assertThat(exports).hasSizeGreaterThanOrEqualTo(7);
    long skippedOnH200 = 0;
    for (Path export : exports) {
      try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + export);
          Statement st = c.createStatement()) {
        Set<String> tables = new HashSet<>();
        try (ResultSet rs =
            st.executeQuery("SELECT name FROM sqlite_master WHERE type = 'table'")) {
          while (rs.next()) {
            tables.add(rs.getString(1));
          }
        }
        if (!tables.contains("CUPTI_ACTIVITY_KIND_RUNTIME") || !tables.contains("StringIds")) {
          continue;
        }
        Map<Long, String> names = new HashMap<>();
        try (ResultSet rs = st.executeQuery("SELECT id, value FROM StringIds")) {
          while (rs.next()) {
            names.put(rs.getLong(1), rs.getString(2));
          }
        }
        List<String> launchers = new ArrayList<>();
        for (String t : ACTIVITY_TABLES) {
          if (tables.contains(t)) {
            // correlation ids are per process: an export of several processes joins on both
            launchers.addAll(
                namesOf(
                    st,
                    names,
                    "SELECT DISTINCT r.nameId FROM "
                        + t
                        + " a JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = a.correlationId"
                        + " AND (a.globalPid >> 24) = (r.globalTid >> 24)"));
          }
        }
        assertThat(launchers).as(export + " launches").isNotEmpty();
        assertThat(launchers)
            .as(export + ": calls with activities")
            .noneMatch(n -> NsysExport.NON_LAUNCHING.matcher(n).lookingAt());
        if (export.toString().contains("/h200-tinylm/")
            || export.toString().contains("/h200-e2e/")) {
          for (String n : namesOf(st, names, "SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME")) {
            skippedOnH200 += NsysExport.NON_LAUNCHING.matcher(n).lookingAt() ? 1 : 0;
          }
        }
      }
    }
    // Most runtime rows of the H200 captures are such calls (cuKernelGetAttribute, cuKernelGetName,
    // ...):
    // 20,712 of nsys_b's 33,894 and 48,573 of engine.sqlite's 81,851 (counted with Python's
    // sqlite3).
    assertThat(skippedOnH200).isEqualTo(20_712 + 48_573);
  }

  private static List<String> namesOf(Statement st, Map<Long, String> names, String sql)
      throws SQLException {
    List<String> out = new ArrayList<>();
    try (ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.add(names.get(rs.getLong(1)));
      }
    }
    return out;
  }
}
