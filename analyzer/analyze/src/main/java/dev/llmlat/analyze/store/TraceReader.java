package dev.llmlat.analyze.store;

import dev.llmlat.attribution.ResourceRule;
import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.semconv.CollectiveKernels;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.RowBinaryReader;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** Reads spans from {@code otel_traces} into {@link SpanRecord}s. */
public final class TraceReader {
  private static final Pattern TRACE_ID = Pattern.compile("[0-9a-f]{32}");

  /** Read as RowBinary in this order (see {@link #parse}). */
  private static final String COLUMNS =
      "TraceId, SpanId, ParentSpanId, toString(SpanName), toString(SpanKind), toString(ServiceName),"
          + " ResourceAttributes['llmlat.layer'], "
          + ResourceRule.HOST.sql()
          + ", toString(ScopeName), "
          + ResourceRule.INSTANCE.sql()
          + ", toUnixTimestamp64Nano(Timestamp), Duration,"
          + " SpanAttributes, arrayMap(t -> toUnixTimestamp64Nano(t), Events.Timestamp),"
          + " arrayMap(n -> toString(n), Events.Name), Events.Attributes, Links.TraceId, Links.SpanId";

  /**
   * Span names outside a request's trace that attribution needs (steps, batches), as an SQL list.
   */
  private static final String SHARED =
      dev.llmlat.attribution.engines.EngineAdapters.sharedSpanNames().stream()
          .map(n -> "'" + n.replace("'", "") + "'")
          .collect(java.util.stream.Collectors.joining(", ", "(", ")"));

  private final ClickHouseStore store;

  public TraceReader(ClickHouseStore store) {
    this.store = store;
  }

  /** A trace id as the store writes it, or an exception naming the bad input. */
  public static String checkTraceId(String traceId) {
    String id = traceId.strip().toLowerCase(java.util.Locale.ROOT);
    if (!TRACE_ID.matcher(id).matches()) {
      String shown =
          traceId.length() <= 80
              ? traceId
              : traceId.substring(0, 77) + "..."; // arguments may be huge
      throw new IllegalArgumentException("not a trace id (32 hex digits): '" + shown + "'");
    }
    return id;
  }

  /**
   * {@code ('id','id',...)} for an {@code IN}: each id checked, so no text reaches SQL unvalidated.
   */
  public static String sqlList(Collection<String> traceIds) {
    StringBuilder in = new StringBuilder("(");
    for (String id : traceIds) {
      in.append(in.length() == 1 ? "'" : ",'").append(checkTraceId(id)).append('\'');
    }
    return in.append(')').toString();
  }

  /**
   * The condition "started in [{from_ns}, {to_ns}]" over query parameters; {@link #window} gives
   * their values.
   */
  static final String IN_WINDOW =
      "Timestamp >= fromUnixTimestamp64Nano({from_ns:Int64}) AND Timestamp <= fromUnixTimestamp64Nano({to_ns:Int64})";

  static Map<String, Object> window(long fromNs, long toNs) {
    Map<String, Object> params = new HashMap<>();
    params.put("from_ns", fromNs);
    params.put("to_ns", toNs);
    return params;
  }

  /**
   * Every span of the given traces, plus the step spans (engine and GPU) in [fromNs, toNs]. When
   * the window is given, trace spans are looked up in it too (they lie within it), which lets the
   * engine skip the parts of the table outside it.
   */
  public List<SpanRecord> read(Collection<String> traceIds, long fromNs, long toNs) {
    Map<String, SpanRecord> spans = new LinkedHashMap<>();
    List<String> ids = new ArrayList<>(traceIds);
    boolean windowed = fromNs <= toNs;
    for (int i = 0; i < ids.size(); i += 5000) {
      Map<String, Object> params = window(fromNs, toNs);
      params.put("trace_ids", arrayParameter(ids.subList(i, Math.min(ids.size(), i + 5000))));
      select(
          "TraceId IN {trace_ids:Array(String)}" + (windowed ? " AND " + IN_WINDOW : ""),
          params,
          spans);
    }
    if (windowed) {
      select("SpanName IN " + SHARED + " AND " + IN_WINDOW, window(fromNs, toNs), spans);
    }
    List<SpanRecord> out = new ArrayList<>(spans.values());
    out.addAll(collectives(out));
    return out;
  }

  /**
   * The collective kernels of the GPU steps among {@code spans}, from {@code gpu_collectives} (the
   * view of {@code gpu_kernels} by {@link CollectiveKernels#sqlSuperset}, narrowed here by {@link
   * CollectiveKernels#matches}), as kernel spans under their step (trace id the step's): a step
   * several ranks ran (tensor parallelism) is matched across its copies by them.
   */
  List<SpanRecord> collectives(List<SpanRecord> spans) {
    List<SpanRecord> gpuSteps = new ArrayList<>();
    for (SpanRecord s : spans) {
      if (dev.llmlat.attribution.TraceAttribution.isGpuStep(s)) {
        gpuSteps.add(s);
      }
    }
    if (!anyOverlapByName(gpuSteps)) {
      return new ArrayList<>(); // copies share their name: without two of a name overlapping there
      // are none (one GPU's steps)
    }
    Map<String, SpanRecord> steps = new HashMap<>();
    for (SpanRecord s : gpuSteps) {
      steps.put(s.spanId(), s);
    }
    List<SpanRecord> out = new ArrayList<>();
    List<String> ids = copiesOnSeveralRanks(steps.values());
    for (int i = 0; i < ids.size(); i += 5000) {
      Map<String, Object> params = new HashMap<>();
      // span ids are hex: anything else is dropped, so no text reaches SQL unchecked
      params.put(
          "steps",
          ids.subList(i, Math.min(ids.size(), i + 5000)).stream()
              .map(id -> "'" + id.replaceAll("[^0-9a-f]", "") + "'")
              .collect(java.util.stream.Collectors.joining(",", "[", "]")));
      RowBinaryReader in =
          new RowBinaryReader(
              store.queryRowBinary(
                  "SELECT StepSpanId, toString(Name),"
                      + " toUnixTimestamp64Nano(Start), toInt64(DurationNs), toInt64(Device), toInt64(Pid),"
                      + " toInt64(CorrelationId) FROM gpu_collectives WHERE StepSpanId IN {steps:Array(String)}",
                  params));
      while (in.hasMore()) {
        String step = in.string();
        String name = in.string();
        long start = in.int64();
        long duration = in.int64();
        long device = in.int64();
        long pid = in.int64();
        long correlation = in.int64();
        SpanRecord parent = steps.get(step);
        if (parent == null || !CollectiveKernels.matches(name)) {
          continue;
        }
        Map<String, String> attributes =
            Map.of(
                LlmlatAttributes.GPU_KIND,
                "kernel",
                LlmlatAttributes.GPU_DEVICE,
                Long.toString(device),
                "process.pid",
                Long.toString(pid));
        // no span id is stored per kernel: one made of its process and correlation id (unique
        // within a process)
        // the step's resource: the clock alignment moves both alike
        out.add(
            new SpanRecord(
                parent.traceId(),
                "k" + pid + "." + correlation,
                step,
                name,
                "Internal",
                parent.service(),
                parent.layer(),
                parent.host(),
                parent.scope(),
                parent.instance(),
                start,
                start + duration,
                attributes,
                List.of(),
                List.of()));
      }
    }
    return out;
  }

  /**
   * The ids of GPU steps that run on several ranks at once: copies of one step (same name and
   * requests) that overlap in time. Only they can wait for each other, so a store of single-GPU
   * steps is never asked for collectives (a query per chunk otherwise; a decode batch repeated on
   * one GPU follows itself, it does not overlap).
   */
  private static List<String> copiesOnSeveralRanks(Collection<SpanRecord> steps) {
    Map<String, List<SpanRecord>> byStep = new HashMap<>();
    for (SpanRecord s : steps) {
      List<String> served = s.arrayAttr(LlmlatAttributes.TRACE_IDS);
      if (served.isEmpty()) {
        served = s.links().stream().map(SpanRecord.Link::traceId).toList();
      }
      String key = s.name() + "\0" + String.join(",", served.stream().sorted().toList());
      byStep.computeIfAbsent(key, k -> new ArrayList<>()).add(s);
    }
    List<String> ids = new ArrayList<>();
    for (List<SpanRecord> copies : byStep.values()) {
      if (copies.size() < 2) {
        continue;
      }
      copies.sort(java.util.Comparator.comparingLong(SpanRecord::startNs));
      boolean[] overlapping = new boolean[copies.size()];
      long reach = Long.MIN_VALUE;
      int reacher = -1;
      for (int i = 0; i < copies.size(); i++) {
        SpanRecord c = copies.get(i);
        if (c.startNs() < reach) {
          overlapping[i] = true;
          overlapping[reacher] = true;
        }
        if (c.endNs() > reach) {
          reach = c.endNs();
          reacher = i;
        }
      }
      for (int i = 0; i < copies.size(); i++) {
        if (overlapping[i]) {
          ids.add(copies.get(i).spanId());
        }
      }
    }
    return ids;
  }

  /**
   * Whether two steps of one name may overlap as {@link #copiesOnSeveralRanks} sees it (in start
   * order, one starts before an earlier one ends), whatever the order of steps that start together:
   * a cheap test that reads no step's served traces, which are dear to read, and is true whenever
   * that method finds any.
   */
  private static boolean anyOverlapByName(List<SpanRecord> steps) {
    Map<String, List<SpanRecord>> byName = new HashMap<>();
    for (SpanRecord s : steps) {
      byName.computeIfAbsent(s.name(), k -> new ArrayList<>()).add(s);
    }
    for (List<SpanRecord> named : byName.values()) {
      named.sort(java.util.Comparator.comparingLong(SpanRecord::startNs));
      long reach = Long.MIN_VALUE; // the latest end of the steps that started earlier
      for (int i = 0; i < named.size(); ) {
        long start = named.get(i).startNs();
        if (start < reach) {
          return true;
        }
        long ends = Long.MIN_VALUE;
        int from = i;
        for (; i < named.size() && named.get(i).startNs() == start; i++) {
          ends = Math.max(ends, named.get(i).endNs());
        }
        if (i - from > 1 && ends > start) {
          return true; // started together, one lasting: in one of their orders the other starts
          // before it ends
        }
        reach = Math.max(reach, ends);
      }
    }
    return false;
  }

  /** An {@code Array(String)} parameter's value ({@code ['id','id']}); each id checked first. */
  static String arrayParameter(Collection<String> traceIds) {
    StringBuilder array = new StringBuilder("[");
    for (String id : traceIds) {
      array.append(array.length() == 1 ? "'" : ",'").append(checkTraceId(id)).append('\'');
    }
    return array.append(']').toString();
  }

  /**
   * Spans matching a condition built by this package; whatever a user typed reaches it only as a
   * query parameter ({@code {name:Type}} in the condition, the value in {@code params}).
   */
  List<SpanRecord> where(String condition, Map<String, ?> params) {
    RowBinaryReader in =
        new RowBinaryReader(
            store.queryRowBinary(
                "SELECT " + COLUMNS + " FROM otel_traces WHERE " + condition, params));
    List<SpanRecord> spans = new ArrayList<>();
    while (in.hasMore()) {
      spans.add(parse(in));
    }
    return spans;
  }

  // RowBinary, not text: rendering maps as text and parsing them back would dominate the read
  private void select(String condition, Map<String, ?> params, Map<String, SpanRecord> into) {
    for (SpanRecord span : where(condition, params)) {
      into.putIfAbsent(span.traceId() + span.spanId(), span);
    }
  }

  private static SpanRecord parse(RowBinaryReader in) {
    // ids as shared strings: a trace's spans hold one copy of its id, a child its parent's
    String traceId = in.sharedString();
    String spanId = in.sharedString();
    String parent = in.sharedString();
    String name = in.repeatedString();
    String kind = in.repeatedString();
    String service = in.repeatedString();
    String layer = in.repeatedString();
    String host = in.repeatedString();
    String scope = in.repeatedString();
    String instance = in.repeatedString();
    long start = in.int64();
    long duration = in.int64();
    Map<String, String> attributes = in.stringMap();
    // most spans have no events and no links: those read as the shared empty list (which, as an
    // ArrayList does, answers a lookup of null)
    List<SpanRecord.Event> events = java.util.Collections.emptyList();
    int eventCount = in.arrayLength();
    if (eventCount > 0) {
      long[] times = new long[eventCount];
      for (int i = 0; i < times.length; i++) {
        times[i] = in.int64();
      }
      String[] names = new String[in.arrayLength()];
      for (int i = 0; i < names.length; i++) {
        names[i] = in.repeatedString();
      }
      events = new ArrayList<>(times.length);
      int eventAttrs = in.arrayLength();
      for (int i = 0; i < eventAttrs; i++) {
        events.add(new SpanRecord.Event(times[i], names[i], in.stringMap()));
      }
    } else {
      in.arrayLength(); // the names and attributes arrays, as empty
      in.arrayLength();
    }
    List<SpanRecord.Link> links = java.util.Collections.emptyList();
    int linkCount = in.arrayLength();
    if (linkCount > 0) {
      String[] linkTraces = new String[linkCount];
      for (int i = 0; i < linkTraces.length; i++) {
        linkTraces[i] = in.sharedString();
      }
      links = new ArrayList<>(linkTraces.length);
      int linkSpans = in.arrayLength();
      for (int i = 0; i < linkSpans; i++) {
        links.add(new SpanRecord.Link(linkTraces[i], in.sharedString()));
      }
    } else {
      in.arrayLength(); // the span ids, as empty
    }
    return new SpanRecord(
        traceId,
        spanId,
        parent,
        name,
        kind,
        service,
        layer,
        host,
        scope,
        instance,
        start,
        start + duration,
        attributes,
        events,
        links);
  }
}
