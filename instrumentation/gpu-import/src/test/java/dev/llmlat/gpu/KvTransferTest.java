package dev.llmlat.gpu;

import static dev.llmlat.gpu.ImportFixtures.attr;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatSpanNames;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * KV-cache transfers of the real disaggregated capture (h200x2-pd: rank 0 prefills and sends, rank
 * 1 receives and decodes). The truth is read here with plain SQL over the export (each kv range,
 * the NCCL kernel launched on its thread while it was open) and from the instances' own logs.
 */
class KvTransferTest {
  private static final long MS = 1_000_000;
  private static final Path DIR = ImportFixtures.file("h200x2-pd");

  /**
   * One side as the test reads it: the range (Unix ns), its process (pid: bits 24-47 of globalTid)
   * and the NCCL kernel's device and times.
   */
  private record Side(
      long pid, long rangeStart, long rangeEnd, long device, long kernelStart, long kernelEnd) {}

  private record Truth(Side send, Side recv) {
    long overlap() {
      return Math.max(
          0,
          Math.min(send.kernelEnd(), recv.kernelEnd())
              - Math.max(send.kernelStart(), recv.kernelStart()));
    }

    long waitNs() {
      return Math.max(0, recv.kernelStart() - send.kernelStart());
    }
  }

  private static final Map<String, Truth> TRUTH = new TreeMap<>();
  private static final Map<Long, Long> DEVICE_OF_PID = new HashMap<>();

  @BeforeAll
  static void readTruth() throws Exception {
    Map<String, Side[]> sides = new HashMap<>();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + DIR.resolve("pd.sqlite"));
        Statement st = c.createStatement()) {
      long offset;
      try (ResultSet rs =
          st.executeQuery("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")) {
        rs.next();
        offset = rs.getLong(1);
      }
      try (ResultSet rs =
          st.executeQuery(
              "SELECT DISTINCT (globalPid >> 24) & 16777215, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")) {
        while (rs.next()) {
          assertThat(DEVICE_OF_PID.put(rs.getLong(1), rs.getLong(2)))
              .as("one device per process")
              .isNull();
        }
      }
      // Every NCCL kernel, with the runtime call that launched it (same process, same correlation
      // id),
      // and the kv range open on that call's thread at the call.
      String sql =
          "SELECT r.text, r.start, r.end, (r.globalTid >> 24) & 16777215, k.deviceId, k.start, k.end"
              + " FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"
              + " JOIN CUPTI_ACTIVITY_KIND_RUNTIME c ON c.correlationId = k.correlationId"
              + "   AND c.globalTid >> 24 = k.globalPid >> 24"
              + " JOIN (SELECT n.start, n.end, n.globalTid, COALESCE(n.text, t.value) AS text FROM NVTX_EVENTS n"
              + "   LEFT JOIN StringIds t ON t.id = n.textId WHERE n.eventType = 59) r"
              + "   ON r.globalTid = c.globalTid AND c.start >= r.start AND c.start < r.end"
              + " WHERE s.value LIKE 'ncclDevKernel%' AND (r.text LIKE 'kv_send %' OR r.text LIKE 'kv_recv %')";
      try (ResultSet rs = st.executeQuery(sql)) {
        while (rs.next()) {
          String[] text = rs.getString(1).split(" ");
          Side side =
              new Side(
                  rs.getLong(4),
                  rs.getLong(2) + offset,
                  rs.getLong(3) + offset,
                  rs.getLong(5),
                  rs.getLong(6) + offset,
                  rs.getLong(7) + offset);
          Side[] pair = sides.computeIfAbsent(text[1], k -> new Side[2]);
          int at = text[0].equals("kv_send") ? 0 : 1;
          assertThat(pair[at]).as("one NCCL kernel per %s range", text[0]).isNull();
          pair[at] = side;
        }
      }
    }
    sides.forEach((t, p) -> TRUTH.put(t, new Truth(p[0], p[1])));
  }

  private static List<JsonNode> log(int rank) throws Exception {
    return ImportFixtures.lines(DIR.resolve("requests.rank" + rank + ".jsonl"));
  }

  private static long longAttr(Span s, String key) {
    String v = attr(s, key);
    assertThat(v).as("%s on %s", key, s.getName()).isNotNull();
    return Long.parseLong(v);
  }

  private static String hex(com.google.protobuf.ByteString b) {
    return HexFormat.of().formatHex(b.toByteArray());
  }

  @Test
  void everyRequestGetsOneSendAndOneReceiveSpanWithItsKernels() throws Exception {
    List<JsonNode> sent = log(0);
    List<JsonNode> received = log(1);
    assertThat(sent).hasSize(8);
    assertThat(TRUTH).hasSize(8);
    ImportFixtures.Collector sink = new ImportFixtures.Collector();
    ImportReport report =
        GpuImporter.importFile(DIR.resolve("pd.sqlite"), ImportOptions.defaults(), sink);
    assertThat(report.requestsMatched()).isEqualTo(8);

    Map<String, List<Span>> sends = new HashMap<>();
    Map<String, List<Span>> recvs = new HashMap<>();
    Map<String, List<Span>> children = new HashMap<>();
    for (Span s : sink.spans) {
      String trace = hex(s.getTraceId());
      if (s.getName().equals(LlmlatSpanNames.KV_SEND)) {
        sends.computeIfAbsent(trace, k -> new ArrayList<>()).add(s);
      } else if (s.getName().equals(LlmlatSpanNames.KV_RECV)) {
        recvs.computeIfAbsent(trace, k -> new ArrayList<>()).add(s);
      } else if (!s.getParentSpanId().isEmpty()) {
        children.computeIfAbsent(hex(s.getParentSpanId()), k -> new ArrayList<>()).add(s);
      }
    }
    assertThat(sends.keySet()).isEqualTo(TRUTH.keySet());
    assertThat(recvs.keySet()).isEqualTo(TRUTH.keySet());
    Map<String, Long> sentNs = new HashMap<>();
    sent.forEach(j -> sentNs.put(j.get("trace_id").asText(), j.get("kv_sent_ns").asLong()));
    Map<String, Long> receivedNs = new HashMap<>();
    received.forEach(
        j -> receivedNs.put(j.get("trace_id").asText(), j.get("kv_received_ns").asLong()));

    for (Map.Entry<String, Truth> e : TRUTH.entrySet()) {
      String trace = e.getKey();
      Truth truth = e.getValue();
      assertThat(sends.get(trace)).hasSize(1);
      assertThat(recvs.get(trace)).hasSize(1);
      Span send = sends.get(trace).get(0);
      Span recv = recvs.get(trace).get(0);
      check(send, truth.send(), 0, children.get(hex(send.getSpanId())));
      check(recv, truth.recv(), 1, children.get(hex(recv.getSpanId())));
      // The spans end when each instance says the send returned / the receive was done
      // (synchronised).
      // The receive's range itself ends then; a send's range closes at enqueue, its kernel ends
      // then.
      assertThat(Math.abs(send.getEndTimeUnixNano() - sentNs.get(trace)))
          .as("kv_sent_ns of %s", trace)
          .isLessThanOrEqualTo(3 * MS);
      assertThat(Math.abs(recv.getEndTimeUnixNano() - receivedNs.get(trace)))
          .as("kv_received_ns of %s", trace)
          .isLessThanOrEqualTo(3 * MS);
      assertThat(Math.abs(truth.recv().rangeEnd() - receivedNs.get(trace)))
          .isLessThanOrEqualTo(3 * MS);
      assertThat(Math.abs(truth.send().kernelEnd() - sentNs.get(trace)))
          .isLessThanOrEqualTo(3 * MS);
      // Wire and wait as attribution will take them from the spans' kernel times.
      long ss = longAttr(send, LlmlatAttributes.KV_KERNEL_START);
      long se = longAttr(send, LlmlatAttributes.KV_KERNEL_END);
      long rs = longAttr(recv, LlmlatAttributes.KV_KERNEL_START);
      long re = longAttr(recv, LlmlatAttributes.KV_KERNEL_END);
      long wire = Math.max(0, Math.min(se, re) - Math.max(ss, rs));
      assertThat(wire)
          .as("wire of %s", trace)
          .isBetween(truth.overlap() - MS, truth.overlap() + MS);
      assertWait(trace, Math.max(0, rs - ss), truth.waitNs());
    }
  }

  /**
   * The span covers the range, on the instance that opened it, with the NCCL kernel as its child.
   */
  private static void check(Span kv, Side truth, long rank, List<Span> kernels) {
    assertThat(DEVICE_OF_PID.get(truth.pid())).as("rank = device").isEqualTo(rank);
    assertThat(kv.getStartTimeUnixNano()).isEqualTo(truth.rangeStart());
    assertThat(longAttr(kv, LlmlatAttributes.KV_RANGE_START)).isEqualTo(truth.rangeStart());
    assertThat(longAttr(kv, LlmlatAttributes.KV_RANGE_END)).isEqualTo(truth.rangeEnd());
    // Range and activities: the last activity launched in a kv range here is its NCCL kernel.
    assertThat(kv.getEndTimeUnixNano()).isEqualTo(Math.max(truth.rangeEnd(), truth.kernelEnd()));
    assertThat(longAttr(kv, "process.pid")).isEqualTo(truth.pid());
    assertThat(longAttr(kv, LlmlatAttributes.GPU_DEVICE)).isEqualTo(truth.device()).isEqualTo(rank);
    assertThat(attr(kv, LlmlatAttributes.HOST_NAME)).isEqualTo("vm");
    assertThat(longAttr(kv, LlmlatAttributes.KV_KERNEL_START)).isEqualTo(truth.kernelStart());
    assertThat(longAttr(kv, LlmlatAttributes.KV_KERNEL_END)).isEqualTo(truth.kernelEnd());
    assertThat(kernels).as("activities of %s", kv.getName()).isNotEmpty();
    List<Span> nccl =
        kernels.stream().filter(k -> k.getName().startsWith("ncclDevKernel_SendRecv")).toList();
    assertThat(nccl).hasSize(1);
    Span k = nccl.get(0);
    assertThat(k.getTraceId()).isEqualTo(kv.getTraceId());
    assertThat(attr(k, LlmlatAttributes.GPU_KIND)).isEqualTo("kernel");
    assertThat(attr(k, LlmlatAttributes.STEP_SPAN_ID)).isEqualTo(hex(kv.getSpanId()));
    assertThat(k.getStartTimeUnixNano()).isEqualTo(truth.kernelStart());
    assertThat(k.getEndTimeUnixNano()).isEqualTo(truth.kernelEnd());
  }

  private static void assertWait(String trace, long got, long truth) {
    assertThat(Math.abs(got - truth))
        .as("wait of %s: %d vs %d", trace, got, truth)
        .isLessThanOrEqualTo(Math.max(MS, truth / 10));
  }

  @Test
  void gpuSummaryListsTheTransfersPerRequest() throws Exception {
    GpuSummaries all = GpuSummaries.of(List.of(DIR.resolve("pd.sqlite")));
    KvTransferSummary kv = all.kvTransfers();
    assertThat(kv).isNotNull();
    assertThat(kv.transfers()).hasSize(TRUTH.size());
    Map<String, Long> bytes = new HashMap<>();
    for (JsonNode j : log(0)) {
      bytes.put(j.get("trace_id").asText(), j.get("kv_bytes").asLong());
    }
    StringBuilder figures = new StringBuilder();
    for (KvTransferSummary.Transfer t : kv.transfers()) {
      Truth truth = TRUTH.get(t.traceId());
      assertThat(truth).as(t.traceId()).isNotNull();
      assertThat(t.send().pid()).isEqualTo(truth.send().pid());
      assertThat(t.send().device()).isEqualTo(0);
      assertThat(t.recv().pid()).isEqualTo(truth.recv().pid());
      assertThat(t.recv().device()).isEqualTo(1);
      assertThat(t.send().rangeEndNs()).isEqualTo(truth.send().rangeEnd());
      assertThat(t.recv().rangeEndNs()).isEqualTo(truth.recv().rangeEnd());
      assertThat(t.send().doneNs())
          .isEqualTo(Math.max(truth.send().rangeEnd(), truth.send().kernelEnd()));
      assertThat(t.wireNs())
          .as("wire of %s", t.traceId())
          .isBetween(truth.overlap() - MS, truth.overlap() + MS);
      assertWait(t.traceId(), t.waitNs(), truth.waitNs());
      assertThat(t.buffered()).isEqualTo(truth.send().kernelEnd() <= truth.recv().kernelStart());
      figures.append(
          String.format(
              Locale.ROOT,
              "%s wait %.3f ms (truth %.3f) wire %.3f ms (truth %.3f)%s kv %d MB%n",
              t.traceId(),
              t.waitNs() / 1e6,
              truth.waitNs() / 1e6,
              t.wireNs() / 1e6,
              truth.overlap() / 1e6,
              t.buffered() ? " buffered" : "",
              bytes.get(t.traceId()) >> 20));
    }
    System.out.print(figures);
    assertThat(all.toJson()).contains("\"kv_transfers\":[{\"trace_id\":\"");
    assertThat(kv.toText()).contains(kv.transfers().get(0).traceId());
    // Both sides of a transfer are one collective: the 8 send/recv pairs and the 2 all-reduces
    // match.
    assertThat(all.collectives().matched()).isEqualTo(10);
  }
}
