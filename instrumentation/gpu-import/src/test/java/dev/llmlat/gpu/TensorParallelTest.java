package dev.llmlat.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Collectives across tensor-parallel ranks on real captures. Every expected figure is read here
 * from the capture itself (SQL over the Nsight export, a tree walk over the Kineto JSON) with a
 * matching of the test's own: the k-th collective kernel of a step on each rank.
 */
class TensorParallelTest {
  private static final long MS = 1_000_000;

  /** A collective kernel as the test reads it: its rank, its step ("" outside steps) and times. */
  private record Kernel(int rank, String step, long start, long end) {}

  /**
   * Per rank: summed duration, and summed wait (latest start of the matched collective − own
   * start).
   */
  private record Truth(
      long[] collectiveNs, long[] waitNs, Map<String, List<long[]>> startsByStep) {}

  /** Groups by step, pairs the k-th of each rank, waits after adding {@code offsets}. */
  private static Truth truth(List<Kernel> kernels, int ranks, long[] offsets) {
    long[] total = new long[ranks];
    Map<String, List<List<Kernel>>> bySteps = new TreeMap<>();
    for (Kernel k : kernels) {
      total[k.rank()] += k.end() - k.start();
      List<List<Kernel>> perRank =
          bySteps.computeIfAbsent(
              k.step(),
              s -> {
                List<List<Kernel>> l = new ArrayList<>();
                for (int r = 0; r < ranks; r++) {
                  l.add(new ArrayList<>());
                }
                return l;
              });
      perRank.get(k.rank()).add(k);
    }
    long[] wait = new long[ranks];
    Map<String, List<long[]>> starts = new HashMap<>();
    bySteps.forEach(
        (step, perRank) -> {
          perRank.forEach(l -> l.sort((a, b) -> Long.compare(a.start(), b.start())));
          int n = perRank.stream().mapToInt(List::size).min().orElse(0);
          for (int k = 0; k < n; k++) {
            long[] s = new long[ranks];
            long latest = Long.MIN_VALUE;
            for (int r = 0; r < ranks; r++) {
              s[r] = perRank.get(r).get(k).start() + offsets[r];
              latest = Math.max(latest, s[r]);
            }
            for (int r = 0; r < ranks; r++) {
              wait[r] += latest - s[r];
            }
            starts.computeIfAbsent(step, x -> new ArrayList<>()).add(s);
          }
        });
    return new Truth(total, wait, starts);
  }

  private static long median(List<Long> v) {
    List<Long> s = new ArrayList<>(v);
    s.sort(null);
    int m = s.size();
    return m % 2 == 1 ? s.get(m / 2) : s.get(m / 2 - 1) + (s.get(m / 2) - s.get(m / 2 - 1)) / 2;
  }

  @Test
  void h200TensorParallelCollectivesWaitsAndStragglers() throws Exception {
    Path file = ImportFixtures.file("h200x2-tp/tp.sqlite");
    List<Kernel> kernels = new ArrayList<>();
    Map<Long, Integer> rankOfPid = new TreeMap<>();
    List<String[]> stepsOfRank1 = new ArrayList<>(); // text, occurrence, in start order
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
        Statement st = c.createStatement()) {
      // Steps: the NVTX ranges per process thread, numbered per (process, text) in start order.
      Map<Long, List<Object[]>> rangesByThread = new HashMap<>();
      try (ResultSet rs =
          st.executeQuery(
              "SELECT start, end, globalTid, text FROM NVTX_EVENTS WHERE eventType = 59"
                  + " AND (text LIKE 'prefill %' OR text LIKE 'decode %') ORDER BY start")) {
        Map<String, Integer> seen = new HashMap<>();
        while (rs.next()) {
          long tid = rs.getLong(3);
          String text = rs.getString(4);
          int occ = seen.merge((tid >> 24) + "|" + text, 1, Integer::sum) - 1;
          rangesByThread
              .computeIfAbsent(tid, t -> new ArrayList<>())
              .add(new Object[] {rs.getLong(1), rs.getLong(2), text + "#" + occ});
        }
      }
      // Rank = order of device, as each process drives one.
      try (ResultSet rs =
          st.executeQuery(
              "SELECT DISTINCT globalPid, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"
                  + " ORDER BY deviceId")) {
        while (rs.next()) {
          rankOfPid.put(rs.getLong(1), rankOfPid.size());
        }
      }
      // The earliest runtime call of each (process, correlation id) launched the kernel.
      Map<String, long[]> launch = new HashMap<>();
      try (ResultSet rs =
          st.executeQuery(
              "SELECT correlationId, globalTid, start FROM CUPTI_ACTIVITY_KIND_RUNTIME"
                  + " ORDER BY start")) {
        while (rs.next()) {
          launch.putIfAbsent(
              (rs.getLong(2) >> 24) + "|" + rs.getLong(1),
              new long[] {rs.getLong(2), rs.getLong(3)});
        }
      }
      try (ResultSet rs =
          st.executeQuery(
              "SELECT k.start, k.end, k.globalPid, k.correlationId FROM"
                  + " CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE 'ncclDevKernel%'"
                  + " OR s.value LIKE 'ncclKernel%' OR s.value LIKE 'cross_device_reduce%'")) {
        while (rs.next()) {
          long gp = rs.getLong(3);
          long[] call = launch.get((gp >> 24) + "|" + rs.getLong(4));
          String step = "";
          if (call != null) {
            for (Object[] r : rangesByThread.getOrDefault(call[0], List.of())) {
              if ((long) r[0] <= call[1] && call[1] < (long) r[1]) {
                step = (String) r[2];
              }
            }
          }
          kernels.add(new Kernel(rankOfPid.get(gp), step, rs.getLong(1), rs.getLong(2)));
        }
      }
      long pid1 =
          rankOfPid.entrySet().stream()
              .filter(e -> e.getValue() == 1)
              .findFirst()
              .orElseThrow()
              .getKey();
      try (ResultSet rs =
          st.executeQuery(
              "SELECT text FROM NVTX_EVENTS WHERE eventType = 59 AND globalTid >> 24 = "
                  + (pid1 >> 24)
                  + " AND (text LIKE 'prefill %' OR text LIKE 'decode %') ORDER BY start")) {
        Map<String, Integer> seen = new HashMap<>();
        while (rs.next()) {
          String text = rs.getString(1);
          stepsOfRank1.add(
              new String[] {text, Integer.toString(seen.merge(text, 1, Integer::sum) - 1)});
        }
      }
    }
    Truth t = truth(kernels, 2, new long[2]); // one export: one clock

    GpuSummaries all = GpuSummaries.of(List.of(file));
    CollectiveSummary s = all.collectives();
    assertThat(s).isNotNull();
    assertThat(s.ranks()).hasSize(2);
    for (int r = 0; r < 2; r++) {
      CollectiveSummary.RankCollectives got = s.ranks().get(r);
      assertThat(got.device()).isEqualTo(r);
      assertThat(got.clockOffsetNs()).isZero();
      assertThat((double) got.collectiveNs())
          .as("rank %d collective time", r)
          .isCloseTo(t.collectiveNs()[r], within(0.02 * t.collectiveNs()[r]));
      assertThat((double) got.waitNs())
          .as("rank %d wait", r)
          .isCloseTo(t.waitNs()[r], within(0.02 * t.waitNs()[r]));
      assertThat(got.matched()).isEqualTo(got.collectives());
      assertThat(got.overlapNs()).isZero(); // compute and all-reduce share one stream per rank here
    }
    assertThat(t.waitNs()[0]).isGreaterThan(10 * MS);
    assertThat(t.waitNs()[1]).isGreaterThan(10 * MS);

    // Steps where rank 1 slept: where its GPU really was >= 20 ms late (rank 0's wait on it), it is
    // named.
    int checked = 0;
    for (JsonNode line : ImportFixtures.lines(ImportFixtures.file("h200x2-tp/straggler.jsonl"))) {
      String[] step = stepsOfRank1.get(line.get("step").asInt());
      assertThat(step[0]).startsWith(line.get("kind").asText() + " ");
      long delay = 0;
      for (long[] starts : t.startsByStep().get(step[0] + "#" + step[1])) {
        delay += Math.max(0, starts[1] - starts[0]);
      }
      if (delay < 20 * MS) {
        continue;
      }
      checked++;
      CollectiveSummary.StepStraggler got =
          s.steps().stream()
              .filter(x -> step[0].equals(x.name()) && x.occurrence() == Integer.parseInt(step[1]))
              .findFirst()
              .orElseThrow();
      assertThat(got.straggler()).as("step %s", line.get("step")).isEqualTo(1);
      assertThat((double) got.lateNs()).isCloseTo(delay, within(0.02 * delay));
    }
    assertThat(checked).isGreaterThanOrEqualTo(1);

    // The JSON carries the same figures.
    JsonNode json = ImportFixtures.JSON.readTree(all.toJson()).get("collectives");
    assertThat(json.get("devices")).hasSize(2);
    assertThat(json.get("devices").get(1).get("wait_ms").decimalValue())
        .isEqualByComparingTo(BigDecimal.valueOf(s.ranks().get(1).waitNs(), 6));
    assertThat(json.get("steps")).hasSize(s.steps().size());
  }

  @Test
  void htaKinetoRanksAreAlignedAndMatched() throws Exception {
    List<Path> files =
        List.of(
            ImportFixtures.file("public/kineto__hta_sampled_rank-0.json.gz"),
            ImportFixtures.file("public/kineto__hta_sampled_rank-1.json.gz"));
    List<Kernel> kernels = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      JsonNode events = ImportFixtures.tree(files.get(r)).get("traceEvents");
      Map<Long, long[]> launches = new HashMap<>(); // correlation -> ts
      List<long[]> steps =
          new ArrayList<>(); // ProfilerStep ranges of the process: start, end, number
      for (JsonNode e : events) {
        String cat = e.path("cat").asText();
        if (cat.equals("cuda_runtime") && e.path("args").has("correlation")) {
          launches.put(e.get("args").get("correlation").asLong(), new long[] {ns(e.get("ts"))});
        } else if (cat.equals("user_annotation")
            && e.get("name").asText().matches("ProfilerStep#\\d+")) {
          steps.add(
              new long[] {
                ns(e.get("ts")),
                ns(e.get("ts")) + ns(e.get("dur")),
                Long.parseLong(e.get("name").asText().substring(13))
              });
        }
      }
      for (JsonNode e : events) {
        if (e.path("cat").asText().equals("kernel") && e.get("name").asText().startsWith("nccl")) {
          long[] call = launches.get(e.get("args").get("correlation").asLong());
          String step = "";
          for (long[] st : steps) {
            if (call != null && st[0] <= call[0] && call[0] < st[1]) {
              step = "ProfilerStep#" + st[2];
            }
          }
          kernels.add(new Kernel(r, step, ns(e.get("ts")), ns(e.get("ts")) + ns(e.get("dur"))));
        }
      }
    }
    // Clock: the median of rank 0's end minus rank 1's, the k-th collective of each step paired.
    Map<String, List<List<Kernel>>> paired = new TreeMap<>();
    for (Kernel k : kernels) {
      paired
          .computeIfAbsent(k.step(), x -> List.of(new ArrayList<>(), new ArrayList<>()))
          .get(k.rank())
          .add(k);
    }
    List<Long> diffs = new ArrayList<>();
    paired
        .values()
        .forEach(
            p -> {
              p.forEach(l -> l.sort((a, b) -> Long.compare(a.start(), b.start())));
              for (int k = 0; k < Math.min(p.get(0).size(), p.get(1).size()); k++) {
                diffs.add(p.get(0).get(k).end() - p.get(1).get(k).end());
              }
            });
    long offset = median(diffs);
    Truth t = truth(kernels, 2, new long[] {0, offset});

    GpuSummaries all = GpuSummaries.of(files);
    CollectiveSummary s = all.collectives();
    assertThat(s).isNotNull();
    assertThat(s.ranks())
        .extracting(CollectiveSummary.RankCollectives::device)
        .containsExactly(0L, 1L);
    assertThat(s.ranks().get(0).matched())
        .isEqualTo(s.ranks().get(1).matched())
        .isEqualTo(diffs.size())
        .isEqualTo(s.matched())
        .isEqualTo(10);
    assertThat(s.ranks().get(0).clockOffsetNs()).isZero();
    assertThat(s.ranks().get(1).clockOffsetNs()).isEqualTo(offset);
    assertThat(Math.abs(offset)).isLessThan(10 * MS); // finite, and the hosts' clocks roughly agree
    assertThat(s.ranks().get(1).clockEvidence()).isEqualTo(10);
    for (int r = 0; r < 2; r++) {
      CollectiveSummary.RankCollectives got = s.ranks().get(r);
      assertThat((double) got.collectiveNs())
          .isCloseTo(t.collectiveNs()[r], within(0.02 * t.collectiveNs()[r]));
      assertThat((double) got.waitNs()).isCloseTo(t.waitNs()[r], within(0.02 * t.waitNs()[r]));
      assertThat(got.overlapNs()).isPositive(); // SendRecv runs on its own stream beside compute
    }
    assertThat(s.steps())
        .extracting(CollectiveSummary.StepStraggler::name)
        .containsExactly("ProfilerStep#551", "ProfilerStep#552");
    JsonNode json = ImportFixtures.JSON.readTree(all.toJson());
    assertThat(json.get("files")).hasSize(2);
    assertThat(json.get("collectives").get("matched").asLong()).isEqualTo(10);
  }

  /** A Kineto µs value as ns, exactly. */
  private static long ns(JsonNode us) {
    return us.decimalValue()
        .movePointRight(3)
        .setScale(0, java.math.RoundingMode.HALF_EVEN)
        .longValueExact();
  }

  /**
   * One rank (even one with NCCL kernels): no collectives section, the summary exactly as before.
   */
  @Test
  void singleRankExportsSummarizeAsBefore() throws Exception {
    for (String name :
        List.of(
            "public/kineto__hta_nccl_data_rank0.json.gz",
            "public/kineto__hta_sampled_rank-0.json.gz",
            "public/nsys__pipit_saxpy-mpi-cuda_perlmutter0.sqlite")) {
      Path f = ImportFixtures.file(name);
      GpuSummaries all = GpuSummaries.of(List.of(f));
      assertThat(all.collectives()).as(name).isNull();
      assertThat(all.files()).hasSize(1);
      assertThat(all.files().get(0)).usingRecursiveComparison().isEqualTo(GpuSummary.of(f));
      assertThat(all.toJson()).isEqualTo(GpuSummary.of(f).toJson());
    }
  }
}
