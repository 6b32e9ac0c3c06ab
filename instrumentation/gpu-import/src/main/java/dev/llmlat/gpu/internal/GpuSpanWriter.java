package dev.llmlat.gpu.internal;

import com.google.protobuf.ByteString;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.gpu.UnattributedReason;
import dev.llmlat.nvtx.RangeMatch;
import dev.llmlat.otlpkafka.OtlpAttributes;
import dev.llmlat.otlpkafka.SpanSink;
import dev.llmlat.semconv.CollectiveKernels;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatSpanNames;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns matched ranges and GPU activities into step and kernel spans per the contract in
 * schemas/kafka/README.md. Kernel spans stream out as they come; a step span goes out at {@link
 * #finish()}, once all its activities are known (busy time, first and last activity).
 */
public final class GpuSpanWriter {
  public static final int KERNEL = 0;
  public static final int MEMCPY = 1;
  public static final int MEMSET = 2;
  private static final String[] KIND_NAMES = {"kernel", "memcpy", "memset"};
  private static final ByteString NO_SPAN = ByteString.copyFrom(new byte[8]);
  private static final long ID_STEP = 1;
  private static final long ID_ACTIVITY = 2;
  private static final long ID_LONE_TRACE = 3;

  private final Path file;
  private final ExportFormat format;
  private final SpanRecords out;
  private final Ids ids;
  private final String clockRule;
  private final boolean sortedActivities;
  private final KeyValue sourceAttr;
  private final KeyValue clockAttr;
  // Kernel spans are encoded by hand (see ProtoWriter): these are their attributes' bytes.
  private final byte[][] kindFields = new byte[3][];
  private final byte[][] kindNameBytes = new byte[3][];
  private final byte[] sourceAndClockFields;
  private final IntAttribute deviceAttr = new IntAttribute(LlmlatAttributes.GPU_DEVICE, true);
  private final IntAttribute streamAttr = new IntAttribute(LlmlatAttributes.GPU_STREAM, true);
  private final IntAttribute pidAttr = new IntAttribute("process.pid", true);
  private final IntAttribute tidAttr = new IntAttribute(LlmlatAttributes.THREAD_ID, true);
  private final IntAttribute correlationAttr =
      new IntAttribute(LlmlatAttributes.CUDA_CORRELATION_ID);
  private final IntAttribute bytesAttr = new IntAttribute(LlmlatAttributes.GPU_BYTES);
  private final Map<String, byte[]> names = new HashMap<>();
  private final List<Step> steps = new ArrayList<>();
  private final Set<String> requests = new HashSet<>();
  private final long[] counts = new long[3];
  private final long[] unattributed = new long[UnattributedReason.values().length];
  private final Warnings warnings = new Warnings();
  private final String hostName;
  private String exportHost;
  private long ranges;
  private long activitySeq;
  private long bracketSteps;
  private long transfers;

  private static final class Step {
    final RangeMatch match;
    final String text;
    final long rangeStart;
    final long rangeEnd;
    final ByteString spanId;
    final ByteString traceId;
    final byte[] sharedFields;
    final long pid;
    final long tid;
    IntervalUnion busy;
    long kernels;
    // KV transfers only: the device and the envelope of the transfer (collective) kernels. Min/max
    // is unchanged by counting an activity twice, so a restart leaves them as they are.
    long device = -1;
    long transferStart = Long.MAX_VALUE;
    long transferEnd = Long.MIN_VALUE;

    Step(
        RangeMatch match,
        String text,
        long rangeStart,
        long rangeEnd,
        long pid,
        long tid,
        ByteString spanId,
        ByteString traceId,
        byte[] sharedFields,
        IntervalUnion busy) {
      this.match = match;
      this.text = text;
      this.rangeStart = rangeStart;
      this.rangeEnd = rangeEnd;
      this.pid = pid;
      this.tid = tid;
      this.spanId = spanId;
      this.traceId = traceId;
      this.sharedFields = sharedFields;
      this.busy = busy;
    }
  }

  /**
   * @param identity what makes ids of this export unique (file name, clock anchor)
   * @param sortedActivities whether {@link #activity} is called in start order (constant memory per
   *     step)
   */
  public GpuSpanWriter(
      Path file,
      ExportFormat format,
      ImportOptions options,
      SpanSink sink,
      String clockRule,
      String identity,
      boolean sortedActivities) {
    this.file = file;
    this.format = format;
    this.out =
        new SpanRecords(options.serviceName(), options.hostName(), options.batchSize(), sink);
    this.ids = new Ids(identity);
    this.clockRule = clockRule;
    this.sortedActivities = sortedActivities;
    this.hostName = options.hostName();
    this.sourceAttr = OtlpAttributes.string(LlmlatAttributes.GPU_SOURCE, format.source());
    this.clockAttr = OtlpAttributes.string(LlmlatAttributes.CLOCK_RULE, clockRule);
    for (int k = 0; k < 3; k++) {
      kindFields[k] =
          SpanFields.attribute(OtlpAttributes.string(LlmlatAttributes.GPU_KIND, KIND_NAMES[k]));
      kindNameBytes[k] = KIND_NAMES[k].getBytes(StandardCharsets.UTF_8);
    }
    ProtoWriter w = new ProtoWriter(256);
    w.raw(SpanFields.attribute(sourceAttr));
    w.raw(SpanFields.attribute(clockAttr));
    this.sourceAndClockFields = Arrays.copyOf(w.array(), w.size());
  }

  /** Counts a CPU range of the export, matched or not. */
  public void countRange() {
    ranges++;
  }

  /** The host the export names, put on KV-transfer spans when the options name none. */
  public void exportHost(String host) {
    exportHost = host;
  }

  /** Registers a matched range; returns the step index activities refer to. */
  public int addStep(RangeMatch match, String text, long rangeStartNs, long rangeEndNs) {
    return addStep(match, text, rangeStartNs, rangeEndNs, -1, -1);
  }

  /**
   * {@link #addStep(RangeMatch, String, long, long)} with the thread that opened the range
   * (negative: unknown), which a KV transfer names as its instance. A KV-transfer range becomes a
   * {@code llmlat.kv_send}/{@code llmlat.kv_recv} span instead of a step; its activities join it as
   * a step's do.
   */
  public int addStep(
      RangeMatch match, String text, long rangeStartNs, long rangeEndNs, long pid, long tid) {
    int index = steps.size();
    ByteString spanId = ids.spanId(ID_STEP, index);
    ByteString traceId = Ids.fromHex(match.traceIds().get(0));
    List<KeyValue> shared = new ArrayList<>(2);
    shared.add(OtlpAttributes.string(LlmlatAttributes.STEP_SPAN_ID, Ids.hex(spanId)));
    if (match.kind() != null) {
      shared.add(OtlpAttributes.string(LlmlatAttributes.STEP_NAME, match.kind()));
    }
    // Not the step's trace ids: the step span carries them once (a 256-request decode step would
    // put 9 KB on each of its kernels, and Kafka refuses records over 1 MB).
    ProtoWriter fields = new ProtoWriter(256);
    for (KeyValue kv : shared) {
      fields.raw(SpanFields.attribute(kv));
    }
    steps.add(
        new Step(
            match,
            text,
            rangeStartNs,
            rangeEndNs,
            pid,
            tid,
            spanId,
            traceId,
            Arrays.copyOf(fields.array(), fields.size()),
            newUnion()));
    requests.addAll(match.traceIds());
    if (match.isKvTransfer()) {
      transfers++;
    }
    return index;
  }

  public int stepCount() {
    return steps.size();
  }

  /** What the import kept with a warning; {@link #finish()} reports it. */
  public Warnings warnings() {
    return warnings;
  }

  /**
   * Emits one kernel/memcpy/memset span.
   *
   * @param step the step index from {@link #addStep}, or -1 when unattributed
   * @param reason why it is unattributed (ignored when {@code step >= 0})
   * @param bytes memcpy/memset size, negative when not applicable
   * @param pid launching process, negative when unknown
   * @param tid launching thread, negative when unknown
   */
  public void activity(
      int kind,
      long startNs,
      long endNs,
      String name,
      long device,
      long stream,
      long correlation,
      long bytes,
      long pid,
      long tid,
      int step,
      UnattributedReason reason) {
    activity(
        kind,
        startNs,
        endNs,
        name == null ? null : nameBytes(name),
        device,
        stream,
        correlation,
        bytes,
        pid,
        tid,
        step,
        reason);
  }

  /**
   * {@link #activity(int, long, long, String, long, long, long, long, long, long, int,
   * UnattributedReason)} with the name in UTF-8 (null: none).
   */
  public void activity(
      int kind,
      long startNs,
      long endNs,
      byte[] name,
      long device,
      long stream,
      long correlation,
      long bytes,
      long pid,
      long tid,
      int step,
      UnattributedReason reason) {
    long seq = activitySeq++;
    long end = Math.max(startNs, endNs);
    Step st = count(kind, startNs, end, step, reason);
    if (st != null && st.match.isKvTransfer()) {
      transferActivity(st, kind, startNs, end, name, device);
    }
    ByteString traceId = st != null ? st.traceId : ids.traceId(ID_LONE_TRACE, seq);
    // Span fields in number order, defaults left out: the bytes protobuf-java would write.
    ProtoWriter w = out.begin();
    w.rawByte(SpanFields.TRACE_ID);
    w.rawByte(16);
    w.raw(traceId);
    w.rawByte(SpanFields.SPAN_ID);
    w.rawByte(8);
    w.longBigEndian(ids.spanIdBits(ID_ACTIVITY, seq));
    if (st != null) {
      w.rawByte(SpanFields.PARENT_SPAN_ID);
      w.rawByte(8);
      w.raw(st.spanId);
    }
    byte[] n = name == null ? kindNameBytes[kind] : name;
    w.lengthDelimited(SpanFields.NAME, n, 0, n.length);
    w.rawByte(SpanFields.KIND);
    w.rawByte(Span.SpanKind.SPAN_KIND_INTERNAL_VALUE);
    if (startNs != 0) {
      w.rawByte(SpanFields.START_TIME);
      w.fixed64(startNs);
    }
    if (end != 0) {
      w.rawByte(SpanFields.END_TIME);
      w.fixed64(end);
    }
    w.raw(kindFields[kind]);
    deviceAttr.write(w, device);
    streamAttr.write(w, stream);
    correlationAttr.write(w, correlation);
    if (bytes >= 0 && kind != KERNEL) {
      bytesAttr.write(w, bytes);
    }
    if (pid >= 0) {
      pidAttr.write(w, pid);
    }
    if (tid >= 0) {
      tidAttr.write(w, tid);
    }
    if (st != null) {
      w.raw(st.sharedFields);
    }
    w.raw(sourceAndClockFields);
    out.end(traceId);
  }

  /** Rare (one range per request), so the name is decoded here only. */
  private static void transferActivity(
      Step st, int kind, long startNs, long end, byte[] name, long device) {
    if (st.device < 0 && device >= 0) {
      st.device = device;
    }
    if (kind == KERNEL
        && name != null
        && CollectiveKernels.matches(new String(name, StandardCharsets.UTF_8))) {
      st.transferStart = Math.min(st.transferStart, startNs);
      st.transferEnd = Math.max(st.transferEnd, end);
    }
  }

  /**
   * Counts an activity {@link #activity} emitted before a {@link #restart}: it goes into the
   * counts, its step's busy time and kernel count again, but no span is emitted.
   */
  public void recount(int kind, long startNs, long endNs, int step, UnattributedReason reason) {
    count(kind, startNs, Math.max(startNs, endNs), step, reason);
  }

  /**
   * Forgets the activities counted so far, not the spans emitted: they all come again, sorted (see
   * {@link ActivityStream}), those already emitted through {@link #recount}. Span ids go on from
   * where they were, so none repeats.
   */
  public void restart() {
    Arrays.fill(counts, 0);
    Arrays.fill(unattributed, 0);
    for (Step st : steps) {
      st.busy = newUnion();
      st.kernels = 0;
    }
  }

  private IntervalUnion newUnion() {
    return sortedActivities ? IntervalUnion.streaming() : IntervalUnion.buffered();
  }

  /** Counts an activity; returns its step, or null when it is unattributed. */
  private Step count(int kind, long startNs, long end, int step, UnattributedReason reason) {
    counts[kind]++;
    if (step < 0) {
      unattributed[reason.ordinal()]++;
      return null;
    }
    Step st = steps.get(step);
    st.busy.add(startNs, end);
    if (kind == KERNEL) {
      st.kernels++;
    }
    return st;
  }

  private byte[] nameBytes(String name) {
    byte[] b = names.get(name);
    if (b == null) {
      if (names.size() >= 65_536) {
        names.clear(); // bounded: exports with more distinct names than this are rare
      }
      b = name.getBytes(StandardCharsets.UTF_8);
      names.put(name, b);
    }
    return b;
  }

  /**
   * Emits a step known only by its bracket (cudaEvent pairs): no activities, so no busy time or
   * kernel count is claimed.
   */
  public void bracketStep(RangeMatch match, long startNs, long endNs) {
    int index = steps.size() + (int) bracketSteps++;
    Span.Builder s =
        Span.newBuilder()
            .setTraceId(Ids.fromHex(match.traceIds().get(0)))
            .setSpanId(ids.spanId(ID_STEP, index))
            .setName(spanName(match))
            .setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
            .setStartTimeUnixNano(startNs)
            .setEndTimeUnixNano(Math.max(startNs, endNs));
    for (String t : match.traceIds()) {
      s.addLinks(Span.Link.newBuilder().setTraceId(Ids.fromHex(t)).setSpanId(NO_SPAN));
    }
    if (match.kind() != null) {
      s.addAttributes(OtlpAttributes.string(LlmlatAttributes.STEP_KIND, match.kind()));
    }
    s.addAttributes(OtlpAttributes.strings(LlmlatAttributes.TRACE_IDS, match.traceIds()));
    if (match.stepSpanId() != null) {
      s.addAttributes(OtlpAttributes.string(LlmlatAttributes.STEP_SPAN_ID, match.stepSpanId()));
    }
    s.addAttributes(sourceAttr).addAttributes(clockAttr);
    requests.addAll(match.traceIds());
    out.add(s.build());
  }

  private static String spanName(RangeMatch match) {
    return !match.isKvTransfer()
        ? LlmlatSpanNames.STEP
        : RangeMatch.KV_SEND.equals(match.kind())
            ? LlmlatSpanNames.KV_SEND
            : LlmlatSpanNames.KV_RECV;
  }

  /**
   * A KV transfer on its request's trace. The span covers the CPU range and its activities: the
   * range of an asynchronous send closes once the kernel is enqueued, the KV has left when the
   * kernel ends. The range's own times and the transfer kernels' first start and last end are
   * attributes, so that the two sides give the wire time (their kernels' overlap) and the sender's
   * wait for the receiver.
   */
  private Span transferSpan(Step st) {
    long rangeEnd = Math.max(st.rangeStart, st.rangeEnd);
    boolean any = st.busy.count() > 0;
    Span.Builder s =
        Span.newBuilder()
            .setTraceId(st.traceId)
            .setSpanId(st.spanId)
            .setName(spanName(st.match))
            .setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
            .setStartTimeUnixNano(any ? Math.min(st.rangeStart, st.busy.min()) : st.rangeStart)
            .setEndTimeUnixNano(any ? Math.max(rangeEnd, st.busy.max()) : rangeEnd);
    s.addAttributes(OtlpAttributes.integer(LlmlatAttributes.KV_RANGE_START, st.rangeStart))
        .addAttributes(OtlpAttributes.integer(LlmlatAttributes.KV_RANGE_END, rangeEnd));
    s.addAttributes(OtlpAttributes.strings(LlmlatAttributes.TRACE_IDS, st.match.traceIds()));
    if (st.text != null) {
      s.addAttributes(OtlpAttributes.string(LlmlatAttributes.NVTX_TEXT, st.text));
    }
    if (st.pid >= 0) {
      s.addAttributes(OtlpAttributes.integer("process.pid", st.pid));
    }
    if (st.tid >= 0) {
      s.addAttributes(OtlpAttributes.integer(LlmlatAttributes.THREAD_ID, st.tid));
    }
    String host = hostName != null ? hostName : exportHost;
    if (host != null) {
      s.addAttributes(OtlpAttributes.string(LlmlatAttributes.HOST_NAME, host));
    }
    if (st.device >= 0) {
      s.addAttributes(OtlpAttributes.integer(LlmlatAttributes.GPU_DEVICE, st.device));
    }
    busyAttributes(s, st);
    if (st.transferStart <= st.transferEnd) {
      s.addAttributes(OtlpAttributes.integer(LlmlatAttributes.KV_KERNEL_START, st.transferStart))
          .addAttributes(OtlpAttributes.integer(LlmlatAttributes.KV_KERNEL_END, st.transferEnd));
    }
    return s.addAttributes(sourceAttr).addAttributes(clockAttr).build();
  }

  /**
   * The GPU's busy time in a step or transfer range, its kernel count, and its first and last
   * kernel.
   */
  private static void busyAttributes(Span.Builder s, Step st) {
    s.addAttributes(OtlpAttributes.integer(LlmlatAttributes.GPU_BUSY_NS, st.busy.length()))
        .addAttributes(OtlpAttributes.integer(LlmlatAttributes.GPU_KERNELS, st.kernels));
    if (st.busy.count() > 0) {
      s.addAttributes(
              OtlpAttributes.integer(LlmlatAttributes.GPU_FIRST_KERNEL_START, st.busy.min()))
          .addAttributes(
              OtlpAttributes.integer(LlmlatAttributes.GPU_LAST_KERNEL_END, st.busy.max()));
    }
  }

  /** Emits the step spans, flushes, and reports. */
  public ImportReport finish() {
    for (Step st : steps) {
      if (st.match.isKvTransfer()) {
        out.add(transferSpan(st));
        continue;
      }
      boolean any = st.busy.count() > 0;
      Span.Builder s =
          Span.newBuilder()
              .setTraceId(st.traceId)
              .setSpanId(st.spanId)
              .setName("step")
              .setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
              .setStartTimeUnixNano(any ? st.busy.min() : st.rangeStart)
              .setEndTimeUnixNano(any ? st.busy.max() : Math.max(st.rangeStart, st.rangeEnd));
      for (String t : st.match.traceIds()) {
        s.addLinks(Span.Link.newBuilder().setTraceId(Ids.fromHex(t)).setSpanId(NO_SPAN));
      }
      if (st.match.kind() != null) {
        s.addAttributes(OtlpAttributes.string(LlmlatAttributes.STEP_KIND, st.match.kind()));
      }
      s.addAttributes(OtlpAttributes.strings(LlmlatAttributes.TRACE_IDS, st.match.traceIds()));
      if (st.match.stepSpanId() != null) {
        s.addAttributes(
            OtlpAttributes.string(LlmlatAttributes.STEP_SPAN_ID, st.match.stepSpanId()));
      }
      if (st.text != null) {
        s.addAttributes(OtlpAttributes.string(LlmlatAttributes.NVTX_TEXT, st.text));
      }
      busyAttributes(s, st);
      s.addAttributes(sourceAttr).addAttributes(clockAttr);
      out.add(s.build());
    }
    out.flush();
    Map<UnattributedReason, Long> reasons = new EnumMap<>(UnattributedReason.class);
    for (UnattributedReason r : UnattributedReason.values()) {
      if (unattributed[r.ordinal()] > 0) {
        reasons.put(r, unattributed[r.ordinal()]);
      }
    }
    // KV transfers are matched ranges but no steps.
    return new ImportReport(
        file,
        format,
        counts[KERNEL],
        counts[MEMCPY],
        counts[MEMSET],
        ranges,
        steps.size() - transfers + bracketSteps,
        requests.size(),
        reasons,
        clockRule,
        out.spans(),
        out.batches(),
        warnings.list());
  }
}
