package dev.llmlat.live.internal;

import dev.llmlat.analyze.store.AttributionWriter;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.attribution.TraceAttribution;
import dev.llmlat.attribution.engines.EngineAdapters;
import dev.llmlat.attribution.engines.UnknownEngine;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.RowBinaryReader;
import dev.llmlat.store.RowBinaryWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.BytesSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Assembles request traces in one partition's state stores and attributes each once it is complete:
 * it holds a request and no span came for the grace (a wall-clock punctuator checks). A trace with
 * only a gateway's request so far waits three graces: its engine's exporter may still be sending.
 * The grace passes on two clocks: the wall clock's, since its last span reached this task, and the
 * input's, since its last span was sent (record timestamps). While a backlog is read, the wall
 * clock alone would end the grace of traces whose other spans still lie unread further back (a step
 * in another request's trace, in another partition); the input's clock advances only as it is read:
 * it is the earliest of the latest timestamps read from each partition of the span topic, this
 * task's own and those whose spans came through the internal topic (the header {@link
 * PartitionRouting#SOURCE_PARTITION} says which). Partitions are read at different paces, those of
 * other tasks reach this one a commit or more late, and in a backlog a second of wall clock spans
 * many of the input's. A partition that brought no record for a grace of punctuations holds nothing
 * back: it has been read, or sends this task nothing. Attributed traces keep their spans for the
 * retention after their last span; a span arriving in that time (late) attributes the trace again,
 * and the newer row replaces the older.
 *
 * <p>Stores: {@code traces} (a {@link TraceState} per trace), {@code spans} (a trace's spans under
 * its id, each record's as one value; a shared span as an empty reference into {@code
 * shared-spans}, which holds it once per partition with a count of the traces referring to it),
 * {@code timers} (one per trace, by due time) and {@code clock-evidence} ({@link ClockEvidence}).
 * All have changelogs: a task that moves or restarts resumes with them.
 *
 * <p>Rows reach the store before the Streams transaction that records the trace as attributed
 * commits. ClickHouse cannot join that transaction, and need not: {@code llm_request_attribution}
 * is a ReplacingMergeTree ordered by TraceId with AnalyzedAt as the version, so a row written again
 * after a crash (the transaction aborted, the state rolled back, the trace attributed anew)
 * replaces the first in FINAL: never two, and a trace is never marked attributed without its row. A
 * store that refuses the insert leaves the traces waiting; they are tried again after a back-off.
 */
public final class TraceAssembler implements Processor<String, RoutedSpans, Void, Void> {
  private static final Logger LOG = LoggerFactory.getLogger(TraceAssembler.class);
  public static final String TRACES = "traces";
  public static final String SPANS = "spans";
  public static final String SHARED = "shared-spans";
  public static final String TIMERS = "timers";
  public static final String CLOCK = "clock-evidence";

  /**
   * Traces attributed in one call of the core (one insert), and in one punctuation at most: a
   * punctuation runs inside the open transaction, which the broker aborts after Streams' 10 s (kept
   * short: a dead instance's open transaction holds its partitions' readers back that long).
   */
  private static final int BATCH = 2_000;

  private static final int PER_PUNCTUATION = 6_000;
  private static final byte[] REFERENCE = new byte[0];
  private static final long MAX_BACKOFF_MS = 30_000;

  /** How the assembler decides and writes. */
  public record Settings(
      Duration grace,
      Duration retention,
      int partitions,
      Duration punctuateEvery,
      int evidencePerPair,
      String version) {}

  private final Settings settings;
  private final ClickHouseStore store;
  private final LiveMetrics metrics;
  private final Consumer<? super Attribution> attributed;
  private ProcessorContext<Void, Void> context;
  private KeyValueStore<Bytes, byte[]> traces;
  private KeyValueStore<Bytes, byte[]> spans;
  private KeyValueStore<Bytes, byte[]> shared;
  private KeyValueStore<Bytes, byte[]> timers;
  private ClockEvidence clock;
  private int partition;
  private volatile long waiting;
  private volatile long held;
  private long backoffMs;

  /**
   * Per partition of the span topic: the latest timestamp read from it, and how long it has been
   * quiet, counted at this task's punctuations, each adding at most its period: a thread held up
   * elsewhere (another task's long punctuation) gave it no chance to read.
   */
  private final Map<Integer, long[]> read = new java.util.HashMap<>();

  private long lastPunctuationMs;

  public TraceAssembler(Settings settings, ClickHouseStore store, LiveMetrics metrics) {
    this(settings, store, metrics, a -> {});
  }

  /**
   * With {@code attributed} told of each request's first attribution once its row is written (late
   * ones replace it).
   */
  public TraceAssembler(
      Settings settings,
      ClickHouseStore store,
      LiveMetrics metrics,
      Consumer<? super Attribution> attributed) {
    this.settings = settings;
    this.store = store;
    this.metrics = metrics;
    this.attributed = attributed;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    this.traces = context.getStateStore(TRACES);
    this.spans = context.getStateStore(SPANS);
    this.shared = context.getStateStore(SHARED);
    this.timers = context.getStateStore(TIMERS);
    this.clock = new ClockEvidence(context.getStateStore(CLOCK), settings.evidencePerPair());
    this.partition = context.taskId().partition();
    // every partition holds the others back until it has brought a record or been quiet a grace
    for (int p = 0; p < settings.partitions(); p++) {
      read.put(p, new long[2]);
    }
    long w = 0;
    long h = 0;
    try (KeyValueIterator<Bytes, byte[]> all = traces.all()) {
      while (all.hasNext()) {
        h++;
        w += TraceState.decode(all.next().value).dueKind == TraceState.ATTRIBUTE ? 1 : 0;
      }
    }
    waiting = w;
    held = h;
    lastPunctuationMs = context.currentSystemTimeMs();
    metrics.register(this);
    context.schedule(settings.punctuateEvery(), PunctuationType.WALL_CLOCK_TIME, this::punctuate);
  }

  long waiting() {
    return waiting;
  }

  long held() {
    return held;
  }

  @Override
  public void process(Record<String, RoutedSpans> record) {
    long now = context.currentSystemTimeMs();
    boolean internal =
        context
            .recordMetadata()
            .map(m -> m.topic().endsWith(LiveTopology.INTERNAL_TOPIC_SUFFIX))
            .orElse(false);
    long[] from =
        read.computeIfAbsent(
            internal ? PartitionRouting.sourcePartition(record.headers()) : partition,
            p -> new long[2]);
    from[0] = Math.max(from[0], record.timestamp());
    from[1] = 0;
    RoutedSpans routed = record.value();
    int added = 0;
    for (String target : routed.targets()) {
      if (TracePartitioner.partitionOf(target, settings.partitions()) == partition) {
        added += accept(target, routed, now, record.timestamp());
      }
    }
    if (routed.shared() && added > 0) {
      SpanRecord span = routed.spans().get(0);
      Bytes key = StoreKeys.shared(span.traceId(), span.spanId());
      byte[] old = shared.get(key);
      long refs = old == null ? 0 : new RowBinaryReader(old).varUInt();
      RowBinaryWriter out = new RowBinaryWriter(512).varUInt(refs + added);
      SpanCodec.write(out, span);
      shared.put(key, out.toByteArray());
    }
  }

  /**
   * Adds the spans to one trace's assembly; returns 1 when it took a new reference to a shared
   * span. A record's own spans are kept as one value (under its first span's ids): one write per
   * record, not per span; a record delivered twice overwrites itself, and {@link #load} drops spans
   * seen twice.
   */
  private int accept(String traceId, RoutedSpans routed, long now, long sentMs) {
    Bytes traceKey = StoreKeys.trace(traceId);
    byte[] bytes = traces.get(traceKey);
    TraceState state = bytes == null ? new TraceState() : TraceState.decode(bytes);
    if (bytes == null) {
      held++;
    }
    SpanRecord first = routed.spans().get(0);
    Bytes key = StoreKeys.span(traceId, first.traceId(), first.spanId());
    int references = 0;
    if (routed.shared()) {
      if (spans.get(key) == null) {
        spans.put(key, REFERENCE);
        references = 1;
      }
    } else {
      RowBinaryWriter out =
          new RowBinaryWriter(256 * routed.spans().size()).varUInt(routed.spans().size());
      for (SpanRecord s : routed.spans()) {
        SpanCodec.write(out, s);
        state.engineRequest |= EngineAdapters.forRequest(s) != null;
        state.gatewayRequest |= UnknownEngine.isGatewayServer(s);
      }
      spans.put(key, out.toByteArray());
    }
    state.records++;
    state.lastArrivalMs = now;
    state.lastRecordMs = Math.max(state.lastRecordMs, sentMs);
    if (state.engineRequest || state.gatewayRequest) {
      await(traceId, state, TraceState.ATTRIBUTE, now + wait(state));
    } else {
      await(traceId, state, TraceState.EXPIRE, now + settings.retention().toMillis());
    }
    traces.put(traceKey, state.encode());
    return references;
  }

  /**
   * How long a trace with a request waits for more spans: a grace, three while only its gateway's
   * came.
   */
  private long wait(TraceState state) {
    return (state.engineRequest ? 1 : 3) * settings.grace().toMillis();
  }

  /**
   * The stream time at which the trace's wait ends: the latest of its records' timestamps, plus the
   * wait.
   */
  private long sentDue(TraceState state) {
    return state.lastRecordMs + wait(state);
  }

  /**
   * The trace is to be attributed (or dropped) at {@code readyMs}. Its timer moves only when that
   * is sooner or another action: a timer that fires early is set again ({@link #punctuate}), so a
   * trace receiving spans rewrites its timer about once per grace, not once per record.
   */
  private void await(String traceId, TraceState state, int kind, long readyMs) {
    state.readyMs = readyMs;
    if (state.dueMs == 0 || kind != state.dueKind || readyMs < state.dueMs) {
      schedule(traceId, state, kind, readyMs);
    }
  }

  /**
   * Moves the trace's one timer (the caller writes the state). An attribution's timer holds the
   * stream time its trace waits for ({@link #sentDue}), so that a punctuation passes over those
   * whose wait has not passed in the input without reading their states.
   */
  private void schedule(String traceId, TraceState state, int kind, long dueMs) {
    if (state.dueMs != 0) {
      timers.delete(StoreKeys.timer(state.dueMs, traceId));
    }
    if (state.dueKind == TraceState.ATTRIBUTE && kind != TraceState.ATTRIBUTE) {
      waiting--;
    } else if (state.dueKind != TraceState.ATTRIBUTE && kind == TraceState.ATTRIBUTE) {
      waiting++;
    }
    state.dueKind = kind;
    state.dueMs = dueMs;
    state.readyMs = dueMs;
    timers.put(StoreKeys.timer(dueMs, traceId), timerValue(state));
  }

  private byte[] timerValue(TraceState state) {
    return state.dueKind == TraceState.ATTRIBUTE
        ? java.nio.ByteBuffer.allocate(8).putLong(sentDue(state)).array()
        : REFERENCE;
  }

  /**
   * The stream time a timer waits for; none (0) for an expiry's, or a timer written before they
   * held one.
   */
  private static long timerSentDue(byte[] value) {
    return value.length == 8 ? java.nio.ByteBuffer.wrap(value).getLong() : 0;
  }

  /**
   * Attributes the traces whose grace passed on both clocks and drops those whose retention passed,
   * oldest first.
   */
  void punctuate(long now) {
    long period = Math.min(now - lastPunctuationMs, settings.punctuateEvery().toMillis());
    lastPunctuationMs = now;
    long streamTime = Long.MAX_VALUE;
    for (long[] from : read.values()) {
      from[1] += period;
      if (from[1] < settings.grace().toMillis()) {
        streamTime = Math.min(streamTime, from[0]);
      }
    }
    Map<String, TraceState> ready = new LinkedHashMap<>();
    List<Bytes> seen = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> due =
        timers.range(StoreKeys.timer(0, "0".repeat(32)), StoreKeys.lastTimerAt(now))) {
      while (due.hasNext() && seen.size() < PER_PUNCTUATION) {
        KeyValue<Bytes, byte[]> timer = due.next();
        if (timerSentDue(timer.value) <= streamTime) {
          seen.add(timer.key);
        }
      }
    }
    for (Bytes key : seen) {
      String traceId = StoreKeys.traceId(key.get(), 8);
      byte[] bytes = traces.get(StoreKeys.trace(traceId));
      TraceState state = bytes == null ? null : TraceState.decode(bytes);
      if (state == null || state.dueMs != StoreKeys.timerDue(key)) {
        timers.delete(key); // left behind: the trace moved its timer or is gone
      } else if (state.readyMs > now) {
        schedule(traceId, state, state.dueKind, state.readyMs); // spans came since it was set
        traces.put(StoreKeys.trace(traceId), state.encode());
      } else if (state.dueKind == TraceState.EXPIRE) {
        expire(traceId, state);
      } else if (sentDue(state) > streamTime) {
        timers.put(
            key,
            timerValue(
                state)); // spans sent later came since it was set: wait for those in the input
      } else {
        ready.put(traceId, state);
      }
    }
    List<String> ids = new ArrayList<>(ready.keySet());
    for (int i = 0; i < ids.size(); i += BATCH) {
      Map<String, TraceState> part = new LinkedHashMap<>();
      ids.subList(i, Math.min(ids.size(), i + BATCH)).forEach(id -> part.put(id, ready.get(id)));
      if (!attribute(part, now)) {
        break; // the store refused: everything still due waits for the back-off
      }
    }
  }

  /**
   * Attributes and writes one batch; false when the store refused (the traces are due again after a
   * back-off).
   */
  private boolean attribute(Map<String, TraceState> batch, long now) {
    Map<String, SpanRecord> all = new LinkedHashMap<>();
    for (String traceId : batch.keySet()) {
      for (SpanRecord s : load(traceId)) {
        all.putIfAbsent(s.traceId() + s.spanId(), s);
      }
    }
    List<ClockEvidence.Exchange> exchanges = ClockEvidence.exchanges(all.values());
    Set<String> pairs = new HashSet<>();
    exchanges.forEach(e -> pairs.add(e.pair()));
    List<SpanRecord> spansWithEvidence = new ArrayList<>(all.values());
    spansWithEvidence.addAll(clock.spansFor(pairs, batch.keySet()));
    List<Attribution> result = attributeSafely(spansWithEvidence, batch.keySet());
    try {
      AttributionWriter.write(store, result, settings.version());
    } catch (RuntimeException e) {
      metrics.storeFailures.incrementAndGet();
      backoffMs = backoffMs == 0 ? 500 : Math.min(MAX_BACKOFF_MS, 2 * backoffMs);
      LOG.warn(
          "insert of {} attributions into {} failed; {} traces wait, trying again in {} ms: {}",
          result.size(),
          store.description(),
          batch.size(),
          backoffMs,
          String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
      for (Map.Entry<String, TraceState> t : batch.entrySet()) {
        schedule(t.getKey(), t.getValue(), TraceState.ATTRIBUTE, now + backoffMs);
        traces.put(StoreKeys.trace(t.getKey()), t.getValue().encode());
      }
      return false;
    }
    backoffMs = 0;
    metrics.rowsWritten.addAndGet(result.size());
    for (Map.Entry<String, TraceState> t : batch.entrySet()) {
      TraceState state = t.getValue();
      state.attributions++;
      state.attributedAtMs = now;
      metrics.attributions.incrementAndGet();
      if (state.attributions > 1) {
        metrics.lateReattributions.incrementAndGet();
      }
      metrics.delay(now - state.lastArrivalMs);
      schedule(
          t.getKey(),
          state,
          TraceState.EXPIRE,
          state.lastArrivalMs + settings.retention().toMillis());
      traces.put(StoreKeys.trace(t.getKey()), state.encode());
    }
    result.stream()
        .filter(a -> batch.containsKey(a.traceId()) && batch.get(a.traceId()).attributions == 1)
        .forEach(attributed);
    clock.record(exchanges);
    return true;
  }

  /**
   * The core over the batch; should it fail, trace by trace, so that one trace it cannot handle
   * (logged, counted, left without a row) does not hold back the others forever.
   */
  private List<Attribution> attributeSafely(List<SpanRecord> spans, Set<String> traceIds) {
    try {
      return TraceAttribution.attribute(spans, traceIds::contains);
    } catch (RuntimeException batchFailure) {
      List<Attribution> out = new ArrayList<>();
      for (String id : traceIds) {
        try {
          out.addAll(TraceAttribution.attribute(spans, id::equals));
        } catch (RuntimeException e) {
          metrics.failedTraces.incrementAndGet();
          LOG.error("attribution of trace {} failed; it gets no row: {}", id, e.toString());
        }
      }
      return out;
    }
  }

  /** The trace's spans, shared ones resolved, each once. */
  private List<SpanRecord> load(String traceId) {
    Map<String, SpanRecord> out = new LinkedHashMap<>();
    try (KeyValueIterator<Bytes, byte[]> it =
        spans.prefixScan(StoreKeys.trace(traceId), new BytesSerializer())) {
      while (it.hasNext()) {
        KeyValue<Bytes, byte[]> kv = it.next();
        if (kv.value.length > 0) {
          RowBinaryReader in = new RowBinaryReader(kv.value);
          for (long n = in.varUInt(); n > 0; n--) {
            SpanRecord s = SpanCodec.read(in);
            out.putIfAbsent(s.traceId() + s.spanId(), s);
          }
        } else {
          byte[] s = shared.get(StoreKeys.sharedOf(kv.key));
          if (s != null) {
            RowBinaryReader in = new RowBinaryReader(s);
            in.varUInt(); // references
            SpanRecord span = SpanCodec.read(in);
            out.putIfAbsent(span.traceId() + span.spanId(), span);
          }
        }
      }
    }
    return new ArrayList<>(out.values());
  }

  /** Drops a trace whose retention passed, and its references to shared spans. */
  private void expire(String traceId, TraceState state) {
    if (state.attributions == 0) {
      metrics.expiredWithoutRequest.incrementAndGet();
    }
    List<KeyValue<Bytes, byte[]>> keys = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> it =
        spans.prefixScan(StoreKeys.trace(traceId), new BytesSerializer())) {
      it.forEachRemaining(keys::add);
    }
    for (KeyValue<Bytes, byte[]> kv : keys) {
      spans.delete(kv.key);
      if (kv.value.length == 0) {
        Bytes sharedKey = StoreKeys.sharedOf(kv.key);
        byte[] s = shared.get(sharedKey);
        if (s != null) {
          RowBinaryReader in = new RowBinaryReader(s);
          long refs = in.varUInt();
          if (refs <= 1) {
            shared.delete(sharedKey);
          } else {
            RowBinaryWriter out = new RowBinaryWriter(s.length).varUInt(refs - 1);
            SpanCodec.write(out, SpanCodec.read(in));
            shared.put(sharedKey, out.toByteArray());
          }
        }
      }
    }
    timers.delete(StoreKeys.timer(state.dueMs, traceId));
    traces.delete(StoreKeys.trace(traceId));
    held--;
  }

  @Override
  public void close() {
    metrics.unregister(this);
  }
}
