package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * `llmlat bench import` on a small replica of the H200 capture: what it builds, imports and prints.
 */
class ImportBenchmarkTest {
  private static final Pattern ROUND =
      Pattern.compile(
          "^(warm-up round|round) (\\d+): raw scan (\\d+) kernels in .*"
              + "\\(importer's settings .*\\); import (\\d+) kernels \\((\\d+) spans, (\\d+) steps, .*; ratio (\\d+)% \\((\\d+)%\\);.*");

  @Test
  void threeCopiesImportThreeTimesTheKernelsAndStepsAndPrintBothRatios() throws Exception {
    Path source = dev.llmlat.sharedtraces.SharedTraces.resolve("h200-tinylm/nsys/nsys_b.sqlite");
    long kernels;
    long ranges;
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + source)) {
      kernels = count(c, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
      ranges =
          count(
              c,
              "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL");
    }
    PrintStream out = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      ImportBenchmark.main(new String[] {source.toString(), "3", "2", "1"});
    } finally {
      System.setOut(out);
    }
    List<String> lines = captured.toString(StandardCharsets.UTF_8).lines().toList();
    assertThat(lines.get(0)).contains(3 * kernels + " kernels (3 copies of nsys_b.sqlite)");
    List<Matcher> rounds = lines.stream().map(ROUND::matcher).filter(Matcher::matches).toList();
    assertThat(rounds).hasSize(3);
    assertThat(rounds.get(0).group(1)).isEqualTo("warm-up round");
    for (Matcher m : rounds) {
      assertThat(Long.parseLong(m.group(3)))
          .isEqualTo(3 * kernels); // the raw scan read every kernel
      assertThat(Long.parseLong(m.group(4))).isEqualTo(3 * kernels);
      assertThat(Long.parseLong(m.group(6)))
          .isEqualTo(3 * ranges); // every H200 range names its requests
      assertThat(Long.parseLong(m.group(5))).isGreaterThan(3 * kernels + 3 * ranges - 1);
      assertThat(Integer.parseInt(m.group(7))).isPositive();
      assertThat(Integer.parseInt(m.group(8))).isPositive();
    }
    assertThat(lines.get(lines.size() - 1))
        .matches(
            "median of rounds 2-3: raw scan \\d+ kernels/s \\(importer's settings"
                + " \\d+\\); import \\d+ kernels/s; ratio \\d+% \\(bootstrap 95% interval \\d+%-\\d+%\\), against the importer's"
                + " settings \\d+% \\(\\d+%-\\d+%\\); import CPU time [0-9.]+x the raw scan's");
  }

  private static long count(Connection c, String sql) throws Exception {
    try (var st = c.createStatement();
        var rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
