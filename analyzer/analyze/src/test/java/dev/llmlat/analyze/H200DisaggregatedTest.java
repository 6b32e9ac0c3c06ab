package dev.llmlat.analyze;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ../shared/traces/h200x2-pd, a real disaggregated prefill/decode run on two H200s: each request's
 * prefill instance (pid 840, GPU 0) and decode instance (pid 841, GPU 1) write their own request
 * span, as engines would, from the instances' logs; the GPU layer is the Nsight export imported as
 * it is. The truth is computed here from those logs and the kernel timeline read with plain SQL:
 *
 * <ul>
 *   <li>TTFT: {@code first_decode_token_ns - arrival_ns};
 *   <li>wire time: the overlap of the NCCL send and receive kernels, or the receive kernel's
 *       duration when the send was buffered (its kernel ended before the receive started);
 *   <li>the wait for the decode instance: receive kernel start - max(prefill_end_ns, kv_send range
 *       start) (the KV was ready and the send posted; the decode instance had not started
 *       receiving);
 *   <li>the request's own compute: its prefill ({@code prefill_end_ns - arrival_ns}, the prefill
 *       instance takes a request as it arrives) plus its share of its first decode step (the NVTX
 *       {@code decode} range that first names it after the receive, shared equally by the requests
 *       it names); batch interference: the rest of that step.
 * </ul>
 */
class H200DisaggregatedTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long MS = 1_000_000;
  static final String PREFILL = "prefill-0";
  static final String DECODE = "decode-0";
  @TempDir Path dir;

  /** One request as the test reads it. */
  record Truth(
      String traceId,
      long arrival,
      long prefillEnd,
      long kvSent,
      long kvReceived,
      long firstToken,
      long finish,
      long sendRangeStart,
      long sendStart,
      long sendEnd,
      long recvStart,
      long recvEnd,
      long stepStart,
      long stepEnd,
      int stepBatch,
      long promptLen) {
    long ttft() {
      return firstToken - arrival;
    }

    boolean buffered() {
      return sendEnd <= recvStart;
    }

    long wire() {
      return buffered()
          ? recvEnd - recvStart
          : Math.min(sendEnd, recvEnd) - Math.max(sendStart, recvStart);
    }

    long waitForDecode() {
      return recvStart - Math.max(prefillEnd, sendRangeStart);
    }

    /**
     * The request's prefill and its first decode step (the whole step: the other requests in it are
     * interference).
     */
    long compute() {
      return (Math.max(prefillEnd, sendRangeStart) - arrival) + (firstToken - stepStart);
    }
  }

  static Path traces() {
    return dev.llmlat.sharedtraces.SharedTraces.resolve("h200x2-pd");
  }

  static Map<String, Truth> truths() throws Exception {
    Map<String, JsonNode> sent = new HashMap<>();
    Map<String, JsonNode> received = new HashMap<>();
    for (String line : Files.readAllLines(traces().resolve("requests.rank0.jsonl"))) {
      JsonNode j = JSON.readTree(line);
      sent.put(j.get("trace_id").asText(), j);
    }
    for (String line : Files.readAllLines(traces().resolve("requests.rank1.jsonl"))) {
      JsonNode j = JSON.readTree(line);
      received.put(j.get("trace_id").asText(), j);
    }
    Map<String, long[]> send = new HashMap<>(); // range start, kernel start, kernel end
    Map<String, long[]> recv = new HashMap<>();
    Map<String, long[]> step =
        new HashMap<>(); // first decode step after the receive: start, end, batch
    try (Connection c =
            DriverManager.getConnection("jdbc:sqlite:" + traces().resolve("pd.sqlite"));
        Statement st = c.createStatement()) {
      long offset;
      try (ResultSet rs =
          st.executeQuery("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")) {
        rs.next();
        offset = rs.getLong(1);
      }
      // each kv range's NCCL kernel: launched by a runtime call (same process, correlation id) on
      // the range's thread while open
      try (ResultSet rs =
          st.executeQuery(
              "SELECT r.text, r.start, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                  + " JOIN StringIds s ON s.id = k.shortName JOIN CUPTI_ACTIVITY_KIND_RUNTIME c ON c.correlationId = k.correlationId"
                  + " AND c.globalTid >> 24 = k.globalPid >> 24 JOIN (SELECT n.start, n.end, n.globalTid, COALESCE(n.text, t.value) AS text"
                  + " FROM NVTX_EVENTS n LEFT JOIN StringIds t ON t.id = n.textId WHERE n.eventType = 59) r"
                  + " ON r.globalTid = c.globalTid AND c.start >= r.start AND c.start < r.end"
                  + " WHERE s.value LIKE 'ncclDevKernel%' AND (r.text LIKE 'kv_send %' OR r.text LIKE 'kv_recv %')")) {
        while (rs.next()) {
          String[] text = rs.getString(1).split(" ");
          long[] v = {rs.getLong(2) + offset, rs.getLong(3) + offset, rs.getLong(4) + offset};
          assertThat((text[0].equals("kv_send") ? send : recv).put(text[1], v)).isNull();
        }
      }
      try (ResultSet rs =
          st.executeQuery(
              "SELECT COALESCE(n.text, t.value), n.start, n.end FROM NVTX_EVENTS n"
                  + " LEFT JOIN StringIds t ON t.id = n.textId WHERE n.eventType = 59 AND COALESCE(n.text, t.value) LIKE 'decode %'"
                  + " ORDER BY n.start")) {
        while (rs.next()) {
          String[] ids = rs.getString(1).substring("decode ".length()).split(",");
          for (String id : ids) {
            long start = rs.getLong(2) + offset;
            if (received.containsKey(id)
                && start >= received.get(id).get("kv_received_ns").asLong()
                && !step.containsKey(id)) {
              step.put(id, new long[] {start, rs.getLong(3) + offset, ids.length});
            }
          }
        }
      }
    }
    Map<String, Truth> out = new java.util.TreeMap<>();
    for (Map.Entry<String, JsonNode> e : sent.entrySet()) {
      String t = e.getKey();
      JsonNode p = e.getValue();
      JsonNode d = received.get(t);
      out.put(
          t,
          new Truth(
              t,
              p.get("arrival_ns").asLong(),
              p.get("prefill_end_ns").asLong(),
              p.get("kv_sent_ns").asLong(),
              d.get("kv_received_ns").asLong(),
              d.get("first_decode_token_ns").asLong(),
              d.get("finish_ns").asLong(),
              send.get(t)[0],
              send.get(t)[1],
              send.get(t)[2],
              recv.get(t)[1],
              recv.get(t)[2],
              step.get(t)[0],
              step.get(t)[1],
              (int) step.get(t)[2],
              p.get("prompt_len").asLong()));
    }
    return out;
  }

  /**
   * Both instances' request spans as OTLP/JSON, each on its own resource: the prefill instance's
   * from arrival to the KV sent, the decode instance's from the KV received to finish, with its
   * first token.
   */
  static Path engineSpans(Path scratch, Map<String, Truth> truths) throws Exception {
    StringBuilder lines = new StringBuilder();
    Map<String, String> parents = new HashMap<>();
    for (String line : Files.readAllLines(traces().resolve("requests.rank0.jsonl"))) {
      JsonNode j = JSON.readTree(line);
      parents.put(j.get("trace_id").asText(), j.get("parent_span_id").asText());
    }
    for (Truth t : truths.values()) {
      lines
          .append(
              span(
                  t.traceId(),
                  "a" + t.traceId().substring(1, 16),
                  parents.get(t.traceId()),
                  PREFILL,
                  840,
                  t.arrival(),
                  t.kvSent(),
                  t.promptLen(),
                  -1))
          .append('\n');
      lines
          .append(
              span(
                  t.traceId(),
                  "b" + t.traceId().substring(1, 16),
                  parents.get(t.traceId()),
                  DECODE,
                  841,
                  t.kvReceived(),
                  t.finish(),
                  t.promptLen(),
                  t.firstToken()))
          .append('\n');
    }
    Path file = scratch.resolve("engines.otlp.jsonl");
    Files.writeString(file, lines);
    return file;
  }

  private static String span(
      String traceId,
      String spanId,
      String parent,
      String instance,
      int pid,
      long start,
      long end,
      long prompt,
      long firstToken)
      throws Exception {
    ObjectNode doc = JSON.createObjectNode();
    ObjectNode rs = doc.putArray("resourceSpans").addObject();
    ArrayNode attrs = rs.putObject("resource").putArray("attributes");
    attr(attrs, "service.name", "engine");
    attr(attrs, "service.instance.id", instance);
    attr(attrs, "process.pid", Integer.toString(pid));
    attr(attrs, "host.name", "vm");
    attr(attrs, "llmlat.layer", "engine");
    ObjectNode s = rs.putArray("scopeSpans").addObject().putArray("spans").addObject();
    s.put("traceId", traceId);
    s.put("spanId", spanId);
    s.put("parentSpanId", parent);
    s.put("name", "llm_request");
    s.put("kind", 2);
    s.put("startTimeUnixNano", Long.toString(start));
    s.put("endTimeUnixNano", Long.toString(end));
    ObjectNode tokens = s.putArray("attributes").addObject();
    tokens.put("key", "gen_ai.usage.input_tokens");
    tokens.putObject("value").put("intValue", Long.toString(prompt));
    if (firstToken >= 0) {
      ObjectNode ev = s.putArray("events").addObject();
      ev.put("name", "llmlat.first_token");
      ev.put("timeUnixNano", Long.toString(firstToken));
    }
    return JSON.writeValueAsString(doc);
  }

  private static void attr(ArrayNode attrs, String key, String value) {
    ObjectNode a = attrs.addObject();
    a.put("key", key);
    a.putObject("value").put("stringValue", value);
  }

  @Test
  void eachRequestIsSplitAcrossItsPrefillAndDecodeInstances() throws Exception {
    Map<String, Truth> truths = truths();
    assertThat(truths).hasSize(8);
    Map<String, Attribution> byTrace = new HashMap<>();
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      importInto(store, engineSpans(dir, truths), ExportFormat.OTLP_JSON, ImportOptions.defaults());
      importInto(
          store,
          traces().resolve("pd.sqlite"),
          ExportFormat.NSYS_SQLITE,
          ImportOptions.defaults().withServiceName("engine").withHostName("vm"));
      Analyzer analyzer = new Analyzer(store);
      // one request per trace, not one per instance
      assertThat(analyzer.analyze(0, Long.MAX_VALUE / 2, true).written()).isEqualTo(8);
      for (String t : truths.keySet()) {
        byTrace.put(t, analyzer.explain(t));
      }
      List<List<String>> rows =
          store
              .query(
                  "SELECT TraceId, DecodeWaitNs, KvTransferNs, TtftNs FROM llm_request_attribution FINAL"
                      + " ORDER BY TraceId")
              .rows();
      assertThat(rows).hasSize(8);
      for (List<String> row : rows) {
        Attribution a = byTrace.get(row.get(0));
        assertThat(Long.parseLong(row.get(1))).isEqualTo(a.component("decode_wait"));
        assertThat(Long.parseLong(row.get(2))).isEqualTo(a.component("kv_transfer"));
        assertThat(Long.parseLong(row.get(3))).isEqualTo(a.ttftNs());
      }
    }
    StringBuilder figures = new StringBuilder();
    for (Truth t : truths.values()) {
      Attribution a = byTrace.get(t.traceId());
      String id = t.traceId();
      assertThat(a.disaggregated()).as(id).isTrue();
      assertThat(a.engineInstance()).isEqualTo(DECODE);
      assertThat(a.notes())
          .anyMatch(
              n ->
                  n.startsWith(
                      "disaggregated (kv_send/kv_recv): prefill on "
                          + PREFILL
                          + ", decode on "
                          + DECODE));
      assertThat((double) a.ttftNs())
          .as("TTFT of %s", id)
          .isCloseTo(t.ttft(), org.assertj.core.data.Percentage.withPercentage(2));
      assertThat(Math.abs(a.component("kv_transfer") - t.wire()))
          .as("wire of %s: %d vs %d", id, a.component("kv_transfer"), t.wire())
          .isLessThanOrEqualTo(MS);
      assertThat(Math.abs(a.component("decode_wait") - t.waitForDecode()))
          .as(
              "wait for the decode instance of %s: %d vs %d",
              id, a.component("decode_wait"), t.waitForDecode())
          .isLessThanOrEqualTo(t.waitForDecode() / 10);
      // every component names its instance
      assertThat(a.instancesOf("decode_wait"))
          .extracting(Attribution.InstancePart::instance)
          .containsOnly(DECODE);
      assertThat(a.instancesOf("kv_transfer"))
          .extracting(Attribution.InstancePart::instance)
          .containsOnly(PREFILL + " -> " + DECODE);
      assertThat(a.instancesOf("prefill_gpu"))
          .extracting(Attribution.InstancePart::role)
          .contains("prefill", "decode");
      assertThat(a.instanceParts().stream().mapToLong(Attribution.InstancePart::ns).sum())
          .isEqualTo(a.ttftNs());
      assertThat(a.criticalPath())
          .filteredOn(s -> s.component().equals("kv_transfer"))
          .allMatch(
              s ->
                  s.span()
                      .equals(
                          t.buffered()
                              ? "buffered send: the receive kernel"
                              : "send and receive kernels overlapping"));
      // a step's CPU share is not split by batch (the engine's split of a step is by its GPU busy
      // time): the
      // request's compute is compared whole, the prefill and the first decode step, both instances
      String largest =
          largest(
              Map.of(
                  "decode_wait",
                  (double) a.component("decode_wait"),
                  "kv_transfer",
                  (double) a.component("kv_transfer"),
                  "queue",
                  (double) a.component("queue"),
                  "compute",
                  (double) a.component("prefill_cpu")
                      + a.component("prefill_gpu")
                      + a.component("batch_interference")
                      + a.component("first_sample")));
      String truthLargest =
          largest(
              Map.of(
                  "decode_wait",
                  (double) t.waitForDecode(),
                  "kv_transfer",
                  (double) t.wire(),
                  "compute",
                  (double) t.compute()));
      assertThat(largest)
          .as("largest part of %s: %s compute %d", id, parts(a), t.compute())
          .isEqualTo(truthLargest);
      assertThat(
              Math.abs(
                  a.component("prefill_cpu")
                      + a.component("prefill_gpu")
                      + a.component("batch_interference")
                      + a.component("first_sample")
                      - t.compute()))
          .as("compute of %s", id)
          .isLessThanOrEqualTo(Math.max(2 * MS, t.compute() / 50));
      figures.append(
          String.format(
              Locale.ROOT,
              "%s TTFT %.1f ms (truth %.1f) decode_wait %.2f (truth %.2f) kv_transfer %.3f (truth %.3f%s)"
                  + " largest %s | %s%n",
              id.substring(0, 8),
              a.ttftNs() / 1e6,
              t.ttft() / 1e6,
              a.component("decode_wait") / 1e6,
              t.waitForDecode() / 1e6,
              a.component("kv_transfer") / 1e6,
              t.wire() / 1e6,
              t.buffered() ? ", buffered" : "",
              largest,
              parts(a)));
    }
    System.out.print(figures);
  }

  private static String parts(Attribution a) {
    StringBuilder out = new StringBuilder();
    for (Attribution.InstancePart p : a.instanceParts()) {
      out.append(String.format(Locale.ROOT, "%s@%s %.2f; ", p.component(), p.role(), p.ns() / 1e6));
    }
    return out.toString();
  }

  private static String largest(Map<String, Double> parts) {
    return parts.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
  }

  private static void importInto(
      EmbeddedClickHouse store, Path file, ExportFormat format, ImportOptions options)
      throws Exception {
    try (StoreImportTarget target = new StoreImportTarget(store)) {
      assertThat(GpuImporter.importFile(file, format, options, target).spans()).isPositive();
      target.commit();
    }
  }
}
