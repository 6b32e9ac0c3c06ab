package dev.llmlat.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.otlpkafka.SpanBatch;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Values out of range or malformed are refused where they are parsed, naming the file, the event,
 * row, line or span, and the field, before anything reaches the sink (the CLI turns the exception
 * into exit 2); what real exporters do write is kept with a counted warning. Never wrapped: the
 * store would show a wrapped time as 1900 and device 70000 as 4464.
 */
class MalformedValuesTest {
  @TempDir static Path dir;

  private static int files;

  private static Path write(String name, String content) throws Exception {
    Path file = dir.resolve((files++) + "-" + name);
    Files.writeString(file, content);
    return file;
  }

  /**
   * Refused as {@link InvalidExportException} naming the file and saying {@code problem}; nothing
   * emitted.
   */
  private static void assertRefused(Path file, ExportFormat format, String... problem) {
    List<SpanBatch> emitted = new ArrayList<>();
    assertThatThrownBy(
            () -> GpuImporter.importFile(file, format, ImportOptions.defaults(), emitted::add))
        .isInstanceOf(InvalidExportException.class)
        .hasMessageStartingWith(file + ": ")
        .hasMessageContainingAll(problem);
    assertThat(emitted).isEmpty();
  }

  private static ImportReport imported(
      Path file, ExportFormat format, ImportFixtures.Collector sink) throws Exception {
    return GpuImporter.importFile(file, format, ImportOptions.defaults(), sink);
  }

  @Nested
  class Kineto {
    private static final String KERNEL =
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
            + "\"ts\":%s,\"dur\":%s,\"args\":{\"device\":%s,\"stream\":%s,\"correlation\":5}}";
    private static final String LAUNCH =
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
            + "\"pid\":100,\"tid\":%s,\"ts\":1700000000000000,\"dur\":3,\"args\":{\"correlation\":%s}}";

    private Path trace(String base, String... events) throws Exception {
      return write(
          "trace.json",
          "{"
              + (base == null ? "" : "\"baseTimeNanoseconds\":" + base + ",")
              + "\"traceEvents\":["
              + String.join(",", events)
              + "]}");
    }

    private Path kernel(String ts, String dur, String device, String stream) throws Exception {
      return trace(
          null, String.format(LAUNCH, 100, 5), String.format(KERNEL, ts, dur, device, stream));
    }

    @Test
    void tsPastTheLongRangeOfNanoseconds() throws Exception {
      assertRefused(
          kernel("1e16", "1", "0", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].ts: 1e16 µs is past year 2262 (Unix ns overflow)");
      assertRefused(
          kernel("10000000000000000", "1", "0", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].ts: 10000000000000000 µs is past year 2262 (Unix ns overflow)");
    }

    @Test
    void tsThatOverflowsOnceTheBaseTimeIsAdded() throws Exception {
      // 9e15 µs is 9e18 ns: a long holds it, but not plus a base of 1e18 ns (which Kineto writes
      // after the events)
      assertRefused(
          write(
              "late-base.json",
              "{\"traceEvents\":["
                  + String.format(LAUNCH, 100, 5)
                  + ","
                  + String.format(KERNEL, "9000000000000000", "1", "0", "7")
                  + "],\"baseTimeNanoseconds\":1000000000000000000}"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].ts: 9000000000000001 µs (ts + dur) + baseTimeNanoseconds "
              + "1000000000000000000 ns is past year 2262");
    }

    @Test
    void tsAndDurWhoseSumOverflows() throws Exception {
      assertRefused(
          kernel("9223372036854775", "1", "0", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].dur: 9223372036854775 µs + 1 µs is past year 2262");
    }

    @Test
    void negativeTs() throws Exception {
      assertRefused(
          kernel("-5", "1", "0", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].ts: -5 µs is before 1970");
    }

    @Test
    void tsThatIsNotANumber() throws Exception {
      assertRefused(
          kernel("\"abc\"", "1", "0", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].ts: 'abc' is not a number (µs)");
      assertRefused(
          kernel("\"1.2.3\"", "1", "0", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].ts: '1.2.3'");
    }

    @Test
    void emptyTs() throws Exception {
      assertRefused(
          kernel("\"\"", "1", "0", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].ts: '' is not a number");
    }

    @Test
    void durThatIsNotANumber() throws Exception {
      assertRefused(
          kernel("1700000000000010", "\"x\"", "0", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].dur: 'x' is not a number");
    }

    @Test
    void hugeExponentIsRefusedWithoutBuildingTheNumber() throws Exception {
      assertRefused(
          kernel("1e999999999", "1", "0", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].ts: 1e999999999 µs is past year 2262");
    }

    @Test
    void deviceThatDoesNotFitTheStoresUInt16() throws Exception {
      assertRefused(
          kernel("1700000000000010", "1", "70000", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].args.device: 70000 does not fit gpu_kernels.Device (UInt16");
    }

    @Test
    void streamThatDoesNotFitTheStoresUInt32() throws Exception {
      assertRefused(
          kernel("1700000000000010", "1", "0", "4294967296"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].args.stream: 4294967296 does not fit gpu_kernels.Stream (UInt32");
      assertRefused(
          kernel("1700000000000010", "1", "0", "-2"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].args.stream: -2 does not fit gpu_kernels.Stream");
    }

    @Test
    void deviceThatIsNotAnInteger() throws Exception {
      assertRefused(
          kernel("1700000000000010", "1", "\"gpu0\"", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].args.device: 'gpu0' is not an integer");
      assertRefused(
          kernel("1700000000000010", "1", "0.5", "7"),
          ExportFormat.KINETO_JSON,
          "traceEvents[1].args.device: '0.5' is not an integer");
    }

    @Test
    void correlationOfALaunchCallThatIsNotAnInteger() throws Exception {
      assertRefused(
          trace(
              null,
              String.format(LAUNCH, 100, "\"c5\""),
              String.format(KERNEL, "1700000000000010", "1", "0", "7")),
          ExportFormat.KINETO_JSON,
          "traceEvents[0].args.correlation: 'c5' is not an integer");
    }

    @Test
    void baseTimeThatIsNotUnixNanoseconds() throws Exception {
      assertRefused(
          trace("\"abc\"", String.format(KERNEL, "10", "1", "0", "7")),
          ExportFormat.KINETO_JSON,
          "baseTimeNanoseconds: 'abc' is not an integer");
      assertRefused(
          trace("-5", String.format(KERNEL, "10", "1", "0", "7")),
          ExportFormat.KINETO_JSON,
          "baseTimeNanoseconds: -5 ns is before 1970");
      assertRefused(
          trace("10000000000000000000", String.format(KERNEL, "10", "1", "0", "7")),
          ExportFormat.KINETO_JSON,
          "baseTimeNanoseconds: '10000000000000000000' ns is past year 2262");
    }

    @Test
    void negativeDurIsKeptAsZeroLengthAndCounted() throws Exception {
      // Kineto wrote these from CUPTI records without an end (kineto#646): kept, not refused
      ImportFixtures.Collector sink = new ImportFixtures.Collector();
      ImportReport r =
          imported(kernel("1700000000000010", "-3", "0", "7"), ExportFormat.KINETO_JSON, sink);
      assertThat(r.kernels()).isEqualTo(1);
      Span k = sink.spans.get(0);
      assertThat(k.getEndTimeUnixNano())
          .isEqualTo(k.getStartTimeUnixNano())
          .isEqualTo(1700000000000010000L);
      assertThat(r.warnings())
          .singleElement()
          .satisfies(
              w -> {
                assertThat(w.problem()).contains("negative dur").contains("zero-length");
                assertThat(w.count()).isEqualTo(1);
                assertThat(w.first()).isEqualTo("traceEvents[1]");
              });
    }

    @Test
    void launchThreadIdOutsideUInt32IsLeftOutAndCounted() throws Exception {
      // Some Kineto versions write thread ids as negative int32s: the join keeps them, the span
      // does not carry them
      ImportFixtures.Collector sink = new ImportFixtures.Collector();
      ImportReport r =
          imported(
              trace(
                  null,
                  String.format(LAUNCH, -247463936, 5),
                  String.format(KERNEL, "1700000000000010", "1", "0", "7")),
              ExportFormat.KINETO_JSON,
              sink);
      assertThat(ImportFixtures.attr(sink.spans.get(0), "thread.id")).isNull();
      assertThat(ImportFixtures.attr(sink.spans.get(0), "process.pid")).isEqualTo("100");
      assertThat(r.warnings())
          .singleElement()
          .satisfies(
              w -> {
                assertThat(w.problem()).contains("not a UInt32");
                assertThat(w.first()).isEqualTo("traceEvents[0] tid -247463936");
              });
    }

    @Test
    void aWellFormedTraceHasNoWarnings() throws Exception {
      ImportFixtures.Collector sink = new ImportFixtures.Collector();
      ImportReport r =
          imported(
              kernel("1700000000000010.5", "1.25", "3", "4294967295"),
              ExportFormat.KINETO_JSON,
              sink);
      assertThat(r.warnings()).isEmpty();
      assertThat(sink.spans.get(0).getStartTimeUnixNano()).isEqualTo(1700000000000010500L);
      assertThat(ImportFixtures.attr(sink.spans.get(0), "gpu.stream.id")).isEqualTo("4294967295");
    }
  }

  @Nested
  class Nsys {
    private Path export(Long sessionStart, String kernelRows) throws Exception {
      Path file = dir.resolve((files++) + "-export.sqlite");
      try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
          Statement st = c.createStatement()) {
        st.execute(
            "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
                + " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, shortName INTEGER)");
        st.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " + kernelRows);
        if (sessionStart != null) {
          st.execute("CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER)");
          st.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (" + sessionStart + ")");
        }
      }
      return file;
    }

    private static final long SESSION = 1_795_970_285_527_930_512L;

    @Test
    void startNearTwoToTheSixtyThreeOverflowsWithTheSessionStart() throws Exception {
      assertRefused(
          export(
              SESSION,
              "(100, 200, 0, 7, 1, NULL, NULL), (9223372036854775000, 9223372036854775100, 0, 7,"
                  + " 2, NULL, NULL)"),
          ExportFormat.NSYS_SQLITE,
          "CUPTI_ACTIVITY_KIND_KERNEL rowid 2: start 9223372036854775000 ns"
              + " + session start "
              + SESSION
              + " ns is past year 2262 (Unix ns overflow)");
    }

    @Test
    void negativeStartWithoutASessionStart() throws Exception {
      assertRefused(
          export(null, "(-100, 200, 0, 7, 1, NULL, NULL)"),
          ExportFormat.NSYS_SQLITE,
          "CUPTI_ACTIVITY_KIND_KERNEL rowid 1: start -100 ns (no session start: read as Unix ns) is before 1970");
    }

    @Test
    void negativeSessionStart() throws Exception {
      assertRefused(
          export(-5L, "(100, 200, 0, 7, 1, NULL, NULL)"),
          ExportFormat.NSYS_SQLITE,
          "TARGET_INFO_SESSION_START_TIME.utcEpochNs: -5 ns is before 1970");
    }

    @Test
    void deviceIdThatDoesNotFitTheStoresUInt16() throws Exception {
      assertRefused(
          export(SESSION, "(100, 200, 0, 7, 1, NULL, NULL), (300, 400, 70000, 7, 2, NULL, NULL)"),
          ExportFormat.NSYS_SQLITE,
          "CUPTI_ACTIVITY_KIND_KERNEL rowid 2: deviceId 70000 does not fit gpu_kernels.Device");
    }

    @Test
    void streamIdThatDoesNotFitTheStoresUInt32() throws Exception {
      assertRefused(
          export(SESSION, "(100, 200, 0, 4294967296, 1, NULL, NULL)"),
          ExportFormat.NSYS_SQLITE,
          "CUPTI_ACTIVITY_KIND_KERNEL rowid 1: streamId 4294967296 does not fit gpu_kernels.Stream");
      assertRefused(
          export(SESSION, "(100, 200, 0, -1, 1, NULL, NULL)"),
          ExportFormat.NSYS_SQLITE,
          "CUPTI_ACTIVITY_KIND_KERNEL rowid 1: streamId -1 does not fit");
    }

    @Test
    void aBadRowIsNamedAlsoWhenTheTableIsReadSorted() throws Exception {
      // Out of start order: read again sorted by sqlite; the row is still named by its rowid.
      assertRefused(
          export(
              SESSION,
              "(500, 600, 0, 7, 1, NULL, NULL), (100, 200, 0, 7, 2, NULL, NULL),"
                  + " (300, 400, 99999, 7, 3, NULL, NULL)"),
          ExportFormat.NSYS_SQLITE,
          "CUPTI_ACTIVITY_KIND_KERNEL rowid 3: deviceId 99999");
    }

    @Test
    void endBeforeStartIsKeptAsZeroLengthAndCounted() throws Exception {
      ImportFixtures.Collector sink = new ImportFixtures.Collector();
      ImportReport r =
          imported(
              export(
                  SESSION,
                  "(100, 200, 0, 7, 1, NULL, NULL), (300, 0, 0, 7, 2, NULL, NULL),"
                      + " (400, 350, 0, 7, 3, NULL, NULL)"),
              ExportFormat.NSYS_SQLITE,
              sink);
      assertThat(r.kernels()).isEqualTo(3);
      assertThat(sink.spans)
          .filteredOn(s -> s.getStartTimeUnixNano() == SESSION + 300)
          .singleElement()
          .satisfies(s -> assertThat(s.getEndTimeUnixNano()).isEqualTo(SESSION + 300));
      assertThat(r.warnings())
          .singleElement()
          .satisfies(
              w -> {
                assertThat(w.problem()).contains("end before they start").contains("zero-length");
                assertThat(w.count()).isEqualTo(2);
                assertThat(w.first()).isEqualTo("CUPTI_ACTIVITY_KIND_KERNEL rowid 2");
              });
    }

    @Test
    void nvtxRangePastTheRange() throws Exception {
      Path file = export(SESSION, "(100, 200, 0, 7, 1, NULL, NULL)");
      try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
          Statement st = c.createStatement()) {
        st.execute(
            "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, globalTid INTEGER,"
                + " text TEXT)");
        st.execute(
            "INSERT INTO NVTX_EVENTS VALUES (50, 9223372036854775000, 59, 1,"
                + " 'prefill 0123456789abcdef0123456789abcdef')");
      }
      assertRefused(
          file,
          ExportFormat.NSYS_SQLITE,
          "NVTX_EVENTS range 'prefill 0123456789abcdef0123456789abcdef': end 9223372036854775000 ns + session start");
    }
  }

  @Nested
  class CudaEvents {
    private static final String TRACE = "\"trace_ids\":[\"0123456789abcdef0123456789abcdef\"]";

    private Path log(String fields) throws Exception {
      return write(
          "cuda_events.jsonl",
          "{\"kind\":\"prefill\","
              + TRACE
              + ",\"host_submit_unix_ns\":1700000000000000000,"
              + "\"gpu_elapsed_ms\":1.5}\n{\"kind\":\"decode\","
              + TRACE
              + ","
              + fields
              + "}\n");
    }

    @Test
    void elapsedPastTheRange() throws Exception {
      assertRefused(
          log("\"host_submit_unix_ns\":1700000000000000000,\"gpu_elapsed_ms\":1e308"),
          ExportFormat.CUDA_EVENT_JSONL,
          "line 2: gpu_elapsed_ms: 1e308 ms after host_submit_unix_ns "
              + "1700000000000000000 is past year 2262 (Unix ns overflow)");
      // fits alone, not after the submit time
      assertRefused(
          log("\"host_submit_unix_ns\":9223372036854775000,\"gpu_elapsed_ms\":1"),
          ExportFormat.CUDA_EVENT_JSONL,
          "line 2: gpu_elapsed_ms: 1 ms after host_submit_unix_ns 9223372036854775000 is"
              + " past year 2262");
    }

    @Test
    void negativeElapsed() throws Exception {
      assertRefused(
          log("\"host_submit_unix_ns\":1700000000000000000,\"gpu_elapsed_ms\":-0.5"),
          ExportFormat.CUDA_EVENT_JSONL,
          "line 2: gpu_elapsed_ms: -0.5 is negative");
    }

    @Test
    void elapsedThatIsNotANumber() throws Exception {
      assertRefused(
          log("\"host_submit_unix_ns\":1700000000000000000,\"gpu_elapsed_ms\":\"1.5\""),
          ExportFormat.CUDA_EVENT_JSONL,
          "line 2: gpu_elapsed_ms: '1.5' is not a number");
    }

    @Test
    void submitPastTheRange() throws Exception {
      assertRefused(
          log("\"host_submit_unix_ns\":18446744073709551615,\"gpu_elapsed_ms\":1"),
          ExportFormat.CUDA_EVENT_JSONL,
          "line 2: host_submit_unix_ns: 18446744073709551615 is past year 2262");
    }

    @Test
    void negativeSubmit() throws Exception {
      assertRefused(
          log("\"host_submit_unix_ns\":-1,\"gpu_elapsed_ms\":1"),
          ExportFormat.CUDA_EVENT_JSONL,
          "line 2: host_submit_unix_ns: -1 is before 1970");
    }

    @Test
    void submitThatIsNotAnInteger() throws Exception {
      assertRefused(
          log("\"host_submit_unix_ns\":1.7e18,\"gpu_elapsed_ms\":1"),
          ExportFormat.CUDA_EVENT_JSONL,
          "line 2: host_submit_unix_ns: '1.7e18' is not an integer");
      assertRefused(
          log("\"host_submit_unix_ns\":\"1700000000000000000\",\"gpu_elapsed_ms\":1"),
          ExportFormat.CUDA_EVENT_JSONL,
          "line 2: host_submit_unix_ns: '1700000000000000000' is not an integer");
    }

    @Test
    void doneThatIsNegative() throws Exception {
      assertRefused(
          log(
              "\"host_submit_unix_ns\":1700000000000000000,\"gpu_elapsed_ms\":1,\"host_done_unix_ns\":-7"),
          ExportFormat.CUDA_EVENT_JSONL,
          "line 2: host_done_unix_ns: -7 is before 1970");
    }
  }

  @Nested
  class Otlp {
    private static final String TRACE = "5b8efff798038103d269b633813fc60c";

    private static String span(String name, String fields) {
      return "{\"name\":\"" + name + "\"," + fields + "}";
    }

    private static String ok(String name, String spanId) {
      return span(
          name,
          "\"traceId\":\""
              + TRACE
              + "\",\"spanId\":\""
              + spanId
              + "\",\"startTimeUnixNano\":\"1544712660000000000\",\"endTimeUnixNano\":\"1544712661000000000\"");
    }

    /** Two requests, one per line: a good span, then the line under test. */
    private Path file(String... spans) throws Exception {
      return write(
          "spans.otlp.jsonl",
          "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":["
              + ok("first", "eee19b7ec3c1b174")
              + "]}]}]}\n{\"resourceSpans\":[{\"resource\":{},\"scopeSpans\":[{\"scope\":{\"name\":\"lib\"},\"spans\":["
              + String.join(",", spans)
              + "]}]}]}\n");
    }

    private static String times(String start, String end) {
      return (start == null ? "" : ",\"startTimeUnixNano\":" + start)
          + (end == null ? "" : ",\"endTimeUnixNano\":" + end);
    }

    private static final String IDS =
        "\"traceId\":\"" + TRACE + "\",\"spanId\":\"eee19b7ec3c1b175\"";

    @Test
    void allZeroTraceId() throws Exception {
      assertRefused(
          file(
              ok("a", "eee19b7ec3c1b175"),
              span(
                  "GET /v1",
                  "\"traceId\":\"00000000000000000000000000000000\","
                      + "\"spanId\":\"eee19b7ec3c1b176\""
                      + times("\"1\"", "\"2\""))),
          ExportFormat.OTLP_JSON,
          "request 2 (line 2), resourceSpans[0].scopeSpans[0].spans[1] 'GET /v1' (line 2): traceId is all zeros");
    }

    @Test
    void missingTraceId() throws Exception {
      assertRefused(
          file(span("GET /v1", "\"spanId\":\"eee19b7ec3c1b176\"" + times("\"1\"", "\"2\""))),
          ExportFormat.OTLP_JSON,
          "spans[0] 'GET /v1' (line 2): traceId is missing");
    }

    @Test
    void allZeroSpanId() throws Exception {
      assertRefused(
          file(
              span(
                  "GET /v1",
                  "\"traceId\":\""
                      + TRACE
                      + "\",\"spanId\":\"0000000000000000\""
                      + times("\"1\"", "\"2\""))),
          ExportFormat.OTLP_JSON,
          "spans[0] 'GET /v1' (line 2): spanId is all zeros");
    }

    @Test
    void missingSpanId() throws Exception {
      assertRefused(
          file(span("GET /v1", "\"traceId\":\"" + TRACE + "\"" + times("\"1\"", "\"2\""))),
          ExportFormat.OTLP_JSON,
          "spans[0] 'GET /v1' (line 2): spanId is missing");
    }

    @Test
    void idThatIsNotHexOfTheRightLength() throws Exception {
      assertRefused(
          file(
              span(
                  "GET /v1",
                  "\"traceId\":\""
                      + TRACE
                      + "00\",\"spanId\":\"eee19b7ec3c1b176\""
                      + times("\"1\"", "\"2\""))),
          ExportFormat.OTLP_JSON,
          "'GET /v1' (line 2): traceId: '" + TRACE + "00' is 34 characters, not 32 hex digits");
      assertRefused(
          file(
              span(
                  "GET /v1",
                  "\"traceId\":\""
                      + TRACE
                      + "\",\"spanId\":\"eee19b7ec3c1b1zz\""
                      + times("\"1\"", "\"2\""))),
          ExportFormat.OTLP_JSON,
          "'GET /v1' (line 2): spanId: 'eee19b7ec3c1b1zz' is not hex");
    }

    @Test
    void negativeStart() throws Exception {
      // the name comes after the bad value: still named
      assertRefused(
          file("{" + IDS + times("\"-5\"", "\"2\"") + ",\"name\":\"late name\"}"),
          ExportFormat.OTLP_JSON,
          "spans[0] 'late name' (line 2): startTimeUnixNano: -5 is negative (fixed64)");
    }

    @Test
    void zeroOrMissingStart() throws Exception {
      assertRefused(
          file(span("GET /v1", IDS + times("0", "\"2\""))),
          ExportFormat.OTLP_JSON,
          "spans[0] 'GET /v1' (line 2): startTimeUnixNano is missing or 0");
      assertRefused(
          file(span("GET /v1", IDS + times(null, "\"2\""))),
          ExportFormat.OTLP_JSON,
          "spans[0] 'GET /v1' (line 2): startTimeUnixNano is missing or 0");
    }

    @Test
    void endBeforeStart() throws Exception {
      assertRefused(
          file(span("GET /v1", IDS + times("\"1544712661000000000\"", "\"1544712660000000000\""))),
          ExportFormat.OTLP_JSON,
          "spans[0] 'GET /v1' (line 2): endTimeUnixNano 1544712660000000000 is before "
              + "startTimeUnixNano 1544712661000000000");
      assertRefused(
          file(span("GET /v1", IDS + times("\"1544712661000000000\"", null))),
          ExportFormat.OTLP_JSON,
          "spans[0] 'GET /v1' (line 2): endTimeUnixNano is missing or 0");
    }

    @Test
    void timePastTwentyTwoSixtyTwo() throws Exception {
      assertRefused(
          file(span("GET /v1", IDS + times("\"9223372036854775808\"", "\"9223372036854775809\""))),
          ExportFormat.OTLP_JSON,
          "'GET /v1' (line 2): startTimeUnixNano: 9223372036854775808 ns is past year 2262");
      assertRefused(
          file(span("GET /v1", IDS + times("1", "18446744073709551616"))),
          ExportFormat.OTLP_JSON,
          "'GET /v1' (line 2): endTimeUnixNano: 18446744073709551616 ns is past year 2262");
    }

    @Test
    void integerOutOfItsFieldsRange() throws Exception {
      assertRefused(
          file(span("GET /v1", IDS + times("1", "2") + ",\"droppedAttributesCount\":4294967296")),
          ExportFormat.OTLP_JSON,
          "'GET /v1' (line 2): droppedAttributesCount: 4294967296 does not fit uint32");
      assertRefused(
          file(
              span(
                  "GET /v1",
                  IDS + times("1", "2") + ",\"events\":[{\"name\":\"e\",\"timeUnixNano\":\"x\"}]")),
          ExportFormat.OTLP_JSON,
          "'GET /v1' (line 2): events[0].timeUnixNano: 'x' is not an integer");
    }

    @Test
    void gpuDeviceOrStreamThatDoesNotFitTheStore() throws Exception {
      String kernel =
          ",\"attributes\":[{\"key\":\"llmlat.gpu.kind\",\"value\":{\"stringValue\":\"kernel\"}},"
              + "{\"key\":\"%s\",\"value\":{\"intValue\":\"%s\"}}]";
      assertRefused(
          file(
              span(
                  "gemm", IDS + times("1", "2") + String.format(kernel, "gpu.device.id", "70000"))),
          ExportFormat.OTLP_JSON,
          "'gemm' (line 2): attributes[1] gpu.device.id: 70000 does not fit gpu_kernels.Device");
      assertRefused(
          file(span("gemm", IDS + times("1", "2") + String.format(kernel, "gpu.stream.id", "-1"))),
          ExportFormat.OTLP_JSON,
          "'gemm' (line 2): attributes[1] gpu.stream.id: -1 does not fit gpu_kernels.Stream");
    }

    @Test
    void repeatedSpanIdInATraceIsKeptAndCounted() throws Exception {
      ImportFixtures.Collector sink = new ImportFixtures.Collector();
      ImportReport r =
          imported(
              file(
                  ok("a", "eee19b7ec3c1b175"),
                  ok("again", "eee19b7ec3c1b174"),
                  ok("b", "eee19b7ec3c1b176")),
              ExportFormat.OTLP_JSON,
              sink);
      assertThat(r.spans()).isEqualTo(4);
      assertThat(sink.spans).hasSize(4);
      assertThat(r.warnings())
          .singleElement()
          .satisfies(
              w -> {
                assertThat(w.problem()).contains("repeats").contains("kept");
                assertThat(w.count()).isEqualTo(1);
                assertThat(w.first())
                    .isEqualTo(
                        "request 2 (line 2), resourceSpans[0].scopeSpans[0].spans[1] 'again' (line 2),"
                            + " trace "
                            + TRACE
                            + " span eee19b7ec3c1b174");
              });
    }

    @Test
    void theSameSpanIdInAnotherTraceIsNoRepeat() throws Exception {
      String other =
          span(
              "other",
              "\"traceId\":\"5b8efff798038103d269b633813fc60d\",\"spanId\":\"eee19b7ec3c1b174\""
                  + times("1", "2"));
      ImportReport r =
          imported(file(other), ExportFormat.OTLP_JSON, new ImportFixtures.Collector());
      assertThat(r.warnings()).isEmpty();
    }
  }
}
