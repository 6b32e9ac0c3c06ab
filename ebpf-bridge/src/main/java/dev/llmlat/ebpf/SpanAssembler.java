package dev.llmlat.ebpf;

import static dev.llmlat.otlpkafka.OtlpAttributes.bool;
import static dev.llmlat.otlpkafka.OtlpAttributes.integer;
import static dev.llmlat.otlpkafka.OtlpAttributes.string;
import static dev.llmlat.otlpkafka.OtlpAttributes.strings;

import com.google.protobuf.ByteString;
import dev.llmlat.nvtx.NvtxPattern;
import dev.llmlat.nvtx.RangeMatch;
import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.otlpkafka.SpanSink;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Turns probe events (in time order) into spans. Per thread it keeps the pending range text and the
 * NVTX stack: a launch belongs to the innermost open range whose text names request traces ({@link
 * NvtxPattern}); such a range becomes a {@code step} span on its first trace with one link per
 * trace and one event per launch. Launches outside steps are grouped per thread into {@code
 * launches} spans on fresh traces; each synchronisation wait is a span, a child of the step it
 * happened in. Not thread-safe: one caller feeds it.
 */
final class SpanAssembler {
  private static final InstrumentationScope SCOPE =
      InstrumentationScope.newBuilder().setName("dev.llmlat.ebpf").setVersion("0.1.0").build();
  private static final ByteString NO_SPAN = ByteString.copyFrom(new byte[8]);
  private static final HexFormat HEX = HexFormat.of();

  private final BridgeOptions options;
  private final SpanSink sink;
  private final KernelSymbolizer symbolizer;
  private final String hostName;
  private final SplittableRandom random = new SplittableRandom();
  private final Map<Long, ThreadState> threads = new HashMap<>();
  private final Map<Long, Map<Long, OpenRange>> processRanges = new HashMap<>();
  private final Map<Long, List<Span>> pending = new LinkedHashMap<>();
  private int pendingCount;
  private ClockOffset clock;
  private long lastMonoNs;

  long launches;
  long driverLaunches;
  long syncs;
  long nvtxRanges;
  long stepRanges;
  long attributedLaunches;
  long spans;

  SpanAssembler(
      BridgeOptions options,
      SpanSink sink,
      KernelSymbolizer symbolizer,
      ClockOffset clock,
      String hostName) {
    this.options = options;
    this.sink = sink;
    this.symbolizer = symbolizer;
    this.clock = clock;
    this.hostName = hostName;
  }

  void clock(ClockOffset clock) {
    this.clock = clock;
  }

  private static final class ThreadState {
    final long pid;
    final long tid;
    final StringBuilder text = new StringBuilder();
    final Deque<OpenRange> stack = new ArrayDeque<>();
    OpenRange unattributed;

    ThreadState(long pid, long tid) {
      this.pid = pid;
      this.tid = tid;
    }
  }

  /** An open NVTX range, or a group of launches outside any step. */
  private final class OpenRange {
    final long pid;
    final long tid;
    final String text;
    final RangeMatch match;
    final String scope;
    final long startMono;
    final ByteString traceId;
    final ByteString spanId;
    final List<Span.Event> events = new ArrayList<>();
    int droppedEvents;
    long launches;
    long driverLaunches;
    long firstLaunch = -1;
    long lastLaunch = -1;
    long syncs;
    long syncNs;

    OpenRange(long pid, long tid, String text, RangeMatch match, String scope, long startMono) {
      this.pid = pid;
      this.tid = tid;
      this.text = text;
      this.match = match;
      this.scope = scope;
      this.startMono = startMono;
      this.traceId = match != null ? ByteString.fromHex(match.traceIds().getFirst()) : randomId(16);
      this.spanId = randomId(8);
    }
  }

  void accept(ProbeEvent event) {
    lastMonoNs =
        Math.max(lastMonoNs, event instanceof ProbeEvent.Sync s ? s.endMonoNs() : event.monoNs());
    ThreadState t =
        threads.computeIfAbsent(
            event.tid(),
            tid -> {
              symbolizer.snapshot(event.pid());
              return new ThreadState(event.pid(), tid);
            });
    switch (event) {
      case ProbeEvent.TextChunk c -> {
        if (c.offset() == 0) {
          t.text.setLength(0);
        }
        t.text.append(c.text());
      }
      case ProbeEvent.Push p -> {
        OpenRange r = open(t, takeText(t), "push", p.monoNs());
        if (r.match != null) {
          closeUnattributed(t, p.monoNs());
        }
        t.stack.push(r);
      }
      case ProbeEvent.Pop p -> {
        OpenRange r = t.stack.poll();
        if (r != null) {
          close(r, p.monoNs(), false);
        }
      }
      case ProbeEvent.Start s ->
          processRanges
              .computeIfAbsent(s.pid(), k -> new HashMap<>())
              .put(s.id(), open(t, takeText(t), "start", s.monoNs()));
      case ProbeEvent.End e -> {
        OpenRange r = processRanges.getOrDefault(e.pid(), Map.of()).get(e.id());
        if (r != null) {
          processRanges.get(e.pid()).remove(e.id());
          close(r, e.monoNs(), false);
        }
      }
      case ProbeEvent.Launch l -> launch(t, l);
      case ProbeEvent.Sync s -> sync(t, s);
    }
  }

  private String takeText(ThreadState t) {
    String text = t.text.toString();
    t.text.setLength(0);
    return text;
  }

  private OpenRange open(ThreadState t, String text, String scope, long mono) {
    RangeMatch match = options.pattern().match(text).orElse(null);
    return new OpenRange(t.pid, t.tid, text, match, scope, mono);
  }

  private OpenRange step(ThreadState t) {
    for (OpenRange r : t.stack) { // innermost first
      if (r.match != null) {
        return r;
      }
    }
    return null;
  }

  private void launch(ThreadState t, ProbeEvent.Launch l) {
    launches++;
    if (l.driver()) {
      driverLaunches++;
    }
    OpenRange r = step(t);
    if (r != null) {
      attributedLaunches++;
    } else {
      if (t.unattributed != null
          && (l.monoNs() - t.unattributed.startMono > options.unattributedWindow().toNanos()
              || t.unattributed.events.size() + t.unattributed.droppedEvents
                  >= Math.max(1, options.maxEventsPerSpan()))) {
        closeUnattributed(t, t.unattributed.lastLaunch);
      }
      if (t.unattributed == null) {
        t.unattributed = new OpenRange(t.pid, t.tid, null, null, "launches", l.monoNs());
      }
      r = t.unattributed;
    }
    r.launches++;
    if (l.driver()) {
      r.driverLaunches++;
    }
    if (r.firstLaunch < 0) {
      r.firstLaunch = l.monoNs();
    }
    r.lastLaunch = l.monoNs();
    if (r.events.size() >= options.maxEventsPerSpan()) {
      r.droppedEvents++;
      return;
    }
    String address = "0x" + Long.toHexString(l.function());
    // Driver launches carry a CUfunction handle and graph launches an exec handle: no symbol to
    // find.
    String kernel =
        l.driver() || l.graph()
            ? address
            : symbolizer.resolve(l.pid(), l.function()).orElse(address);
    r.events.add(
        Span.Event.newBuilder()
            .setTimeUnixNano(clock.toUnixNanos(l.monoNs()))
            .setName(l.api())
            .addAttributes(string(EbpfAttributes.KERNEL, kernel))
            .addAttributes(string(EbpfAttributes.FUNCTION, address))
            .addAttributes(string(EbpfAttributes.GRID, dims(l.grid())))
            .addAttributes(string(EbpfAttributes.BLOCK, dims(l.block())))
            .addAttributes(integer(EbpfAttributes.SHARED_MEM, l.sharedMemBytes()))
            .addAttributes(integer(LlmlatAttributes.GPU_STREAM, l.stream()))
            .build());
  }

  private void sync(ThreadState t, ProbeEvent.Sync s) {
    syncs++;
    OpenRange r = step(t);
    Span.Builder span =
        Span.newBuilder()
            .setTraceId(r != null ? r.traceId : randomId(16))
            .setSpanId(randomId(8))
            .setName(s.api())
            .setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
            .setStartTimeUnixNano(clock.toUnixNanos(s.monoNs()))
            .setEndTimeUnixNano(clock.toUnixNanos(Math.max(s.monoNs(), s.endMonoNs())))
            .addAttributes(string(EbpfAttributes.API, s.api()))
            .addAttributes(integer(LlmlatAttributes.THREAD_ID, s.tid()))
            .addAttributes(integer(EbpfAttributes.RETURN_CODE, s.returnCode()))
            .addAttributes(string(LlmlatAttributes.GPU_SOURCE, LlmlatAttributes.LAYER_EBPF))
            .addAttributes(string(LlmlatAttributes.CLOCK_RULE, ClockOffset.RULE));
    if (s.api().contains("Stream")) {
      span.addAttributes(integer(LlmlatAttributes.GPU_STREAM, s.handle()));
    } else if (s.api().contains("Event")) {
      span.addAttributes(string(EbpfAttributes.HANDLE, "0x" + Long.toHexString(s.handle())));
    }
    if (r != null) {
      span.setParentSpanId(r.spanId)
          .addAttributes(
              string(LlmlatAttributes.STEP_SPAN_ID, HEX.formatHex(r.spanId.toByteArray())))
          .addAttributes(strings(LlmlatAttributes.TRACE_IDS, r.match.traceIds()));
      r.syncs++;
      r.syncNs += Math.max(0, s.endMonoNs() - s.monoNs());
    }
    emit(s.pid(), span.build());
  }

  private void closeUnattributed(ThreadState t, long endMono) {
    if (t.unattributed != null) {
      OpenRange r = t.unattributed;
      t.unattributed = null;
      emit(r.pid, build(r, Math.max(endMono, r.lastLaunch), false).build());
    }
  }

  private void close(OpenRange r, long endMono, boolean truncated) {
    nvtxRanges++;
    if (r.match == null) {
      return; // other ranges only shape the stack
    }
    stepRanges++;
    emit(r.pid, build(r, endMono, truncated).build());
  }

  private Span.Builder build(OpenRange r, long endMono, boolean truncated) {
    Span.Builder s =
        Span.newBuilder()
            .setTraceId(r.traceId)
            .setSpanId(r.spanId)
            .setName(r.match != null ? "step" : "launches")
            .setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
            .setStartTimeUnixNano(clock.toUnixNanos(r.startMono))
            .setEndTimeUnixNano(clock.toUnixNanos(Math.max(r.startMono, endMono)))
            .addAllEvents(r.events)
            .setDroppedEventsCount(r.droppedEvents);
    if (r.match != null) {
      for (String trace : r.match.traceIds()) {
        s.addLinks(Span.Link.newBuilder().setTraceId(ByteString.fromHex(trace)).setSpanId(NO_SPAN));
      }
      if (r.match.kind() != null) {
        s.addAttributes(string(LlmlatAttributes.STEP_KIND, r.match.kind()));
      }
      s.addAttributes(strings(LlmlatAttributes.TRACE_IDS, r.match.traceIds()));
      if (r.match.stepSpanId() != null) {
        s.addAttributes(string(LlmlatAttributes.STEP_SPAN_ID, r.match.stepSpanId()));
      }
      s.addAttributes(string(LlmlatAttributes.NVTX_TEXT, r.text))
          .addAttributes(string(EbpfAttributes.RANGE_SCOPE, r.scope));
    }
    s.addAttributes(integer(LlmlatAttributes.THREAD_ID, r.tid))
        .addAttributes(integer(EbpfAttributes.LAUNCHES, r.launches))
        .addAttributes(integer(EbpfAttributes.DRIVER_LAUNCHES, r.driverLaunches))
        .addAttributes(integer(EbpfAttributes.SYNCS, r.syncs))
        .addAttributes(integer(EbpfAttributes.SYNC_NS, r.syncNs))
        .addAttributes(string(LlmlatAttributes.GPU_SOURCE, LlmlatAttributes.LAYER_EBPF))
        .addAttributes(string(LlmlatAttributes.CLOCK_RULE, ClockOffset.RULE));
    if (r.firstLaunch >= 0) {
      s.addAttributes(integer(EbpfAttributes.FIRST_LAUNCH, clock.toUnixNanos(r.firstLaunch)))
          .addAttributes(integer(EbpfAttributes.LAST_LAUNCH, clock.toUnixNanos(r.lastLaunch)));
    }
    if (truncated) {
      s.addAttributes(bool(EbpfAttributes.TRUNCATED, true));
    }
    return s;
  }

  /** Releases unattributed groups older than the window (called while idle). */
  void tick(long nowMono) {
    for (ThreadState t : threads.values()) {
      if (t.unattributed != null
          && nowMono - t.unattributed.lastLaunch > options.unattributedWindow().toNanos()) {
        closeUnattributed(t, t.unattributed.lastLaunch);
      }
    }
  }

  /**
   * The run is over: still-open ranges end at the last event seen, marked truncated; all is
   * delivered.
   */
  void finish() {
    for (ThreadState t : threads.values()) {
      closeUnattributed(t, lastMonoNs);
      while (!t.stack.isEmpty()) {
        close(t.stack.pollLast(), lastMonoNs, true);
      }
    }
    for (Map<Long, OpenRange> ranges : processRanges.values()) {
      for (OpenRange r : ranges.values()) {
        close(r, lastMonoNs, true);
      }
    }
    processRanges.clear();
    flush();
  }

  private void emit(long pid, Span span) {
    pending.computeIfAbsent(pid, p -> new ArrayList<>()).add(span);
    spans++;
    if (++pendingCount >= options.batchSize()) {
      flush();
    }
  }

  void flush() {
    if (pendingCount == 0) {
      return;
    }
    ExportTraceServiceRequest.Builder request = ExportTraceServiceRequest.newBuilder();
    for (Map.Entry<Long, List<Span>> e : pending.entrySet()) {
      if (e.getValue().isEmpty()) {
        continue;
      }
      Resource.Builder resource =
          Resource.newBuilder()
              .addAttributes(string("service.name", options.serviceName()))
              .addAttributes(string(LlmlatAttributes.LAYER, LlmlatAttributes.LAYER_EBPF))
              .addAttributes(integer("process.pid", e.getKey()));
      if (hostName != null) {
        resource.addAttributes(string(LlmlatAttributes.HOST_NAME, hostName));
      }
      request.addResourceSpans(
          ResourceSpans.newBuilder()
              .setResource(resource)
              .addScopeSpans(ScopeSpans.newBuilder().setScope(SCOPE).addAllSpans(e.getValue())));
    }
    pending.clear();
    pendingCount = 0;
    sink.accept(SpanBatch.of(request.build()));
  }

  private ByteString randomId(int bytes) {
    byte[] id = new byte[bytes];
    do {
      random.nextBytes(id);
    } while (allZero(id));
    return ByteString.copyFrom(id);
  }

  private static boolean allZero(byte[] b) {
    for (byte x : b) {
      if (x != 0) {
        return false;
      }
    }
    return true;
  }

  private static String dims(int[] d) {
    return Integer.toUnsignedString(d[0])
        + ","
        + Integer.toUnsignedString(d[1])
        + ","
        + Integer.toUnsignedString(d[2]);
  }
}
