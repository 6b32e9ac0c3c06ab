package dev.llmlat.gpu.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.llmlat.gpu.ImportProgress;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.otlpjson.InputFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Streams the events of a Kineto / PyTorch profiler Chrome trace (plain or gzip) without holding
 * the document: one reusable {@link Event} per {@code traceEvents} element. Timestamps stay in the
 * trace's microseconds (whatever {@code displayTimeUnit} says) and are turned into exact
 * nanoseconds.
 *
 * <p>Values are checked as they are read, and a bad one fails the file naming the event and field
 * ({@code traceEvents[1234].ts: 1e16 µs is past year 2262 (Unix ns overflow)}): a time that is not
 * a number or overflows nanoseconds, and on GPU activities, launch calls and CPU ops an id that is
 * not an integer, a device or stream that does not fit the store's columns. What Kineto itself has
 * written (negative {@code dur} from CUPTI records without an end, before kineto#646) is kept and
 * counted in {@link Header}.
 */
public final class KinetoTrace {
  /** An {@code args} value that is there but is no integer (see {@link Event#badField}). */
  static final long BAD = Long.MIN_VALUE;

  /** One trace event; fields not present are -1 / null. Reused between calls. */
  public static final class Event {
    public String ph;
    public String cat;
    public String name;
    public long pid;
    public long tid;

    /** Both pid and tid are numbers (not names such as {@code "Spans"}). */
    public boolean numericThread;

    public boolean numericPid;
    public boolean numericTid;
    public long tsNs;
    public long durNs;
    public boolean hasTs;
    public long correlation;
    public long externalId;
    public long device;
    public long stream;

    /** {@code args.device} / {@code args.stream} are given (else the pid / tid stand in). */
    public boolean hasDevice;

    public boolean hasStream;
    public long bytes;

    /** Position in {@code traceEvents}, for messages. */
    public long index;

    /** The first {@code args} field whose value is not an integer, and its text; null when none. */
    String badField;

    String badText;

    void clear() {
      ph = null;
      cat = null;
      name = null;
      pid = -1;
      tid = -1;
      numericThread = true;
      numericPid = true;
      numericTid = true;
      tsNs = 0;
      durNs = 0;
      hasTs = false;
      correlation = -1;
      externalId = -1;
      device = -1;
      stream = -1;
      hasDevice = false;
      hasStream = false;
      bytes = -1;
      badField = null;
      badText = null;
    }

    /** One key per (pid, tid), numeric or textual. */
    public long threadKey() {
      return pid * 0x9E3779B97F4A7C15L ^ tid;
    }

    /** GPU activity kind per the category (old and new spellings), or -1 when not GPU activity. */
    public int gpuKind() {
      if (cat == null || !"X".equals(ph)) {
        return -1;
      }
      switch (cat.toLowerCase(Locale.ROOT)) {
        case "kernel":
          return GpuSpanWriter.KERNEL;
        case "gpu_memcpy":
        case "memcpy":
          return GpuSpanWriter.MEMCPY;
        case "gpu_memset":
        case "memset":
          return GpuSpanWriter.MEMSET;
        default:
          return -1;
      }
    }

    /** Whether this is a CUDA/HIP runtime or driver call (where a launch happens). */
    public boolean isLaunchCall() {
      return correlation >= 0 && isLaunchCategory();
    }

    private boolean isLaunchCategory() {
      if (cat == null) {
        return false;
      }
      String c = cat.toLowerCase(Locale.ROOT);
      return c.equals("cuda_runtime")
          || c.equals("cuda_driver")
          || c.equals("runtime")
          || c.equals("driver");
    }

    /**
     * A GPU activity's device: {@code args.device}, else the pid (Chrome traces put each GPU in a
     * process).
     */
    public long gpuDevice() {
      return hasDevice ? device : numericPid ? pid : -1;
    }

    /** A GPU activity's stream: {@code args.stream}, else the tid (a lane per stream). */
    public long gpuStream() {
      return hasStream ? stream : numericTid ? tid : -1;
    }
  }

  /** Receives events in file order. */
  public interface Visitor {
    void event(Event e) throws IOException;
  }

  /**
   * What the header said, and what the scan saw: the earliest start and the latest end of all
   * events (trace nanoseconds, before {@code baseTimeNanoseconds}; checked against it by the
   * importer, as the header field may come after the events), and what was kept with a warning.
   *
   * @param minTsAt index of the event with the earliest start, -1 when no event has a ts
   * @param maxEndAt index of the event with the latest end
   * @param negativeDurs events whose {@code dur} was negative: read as 0
   * @param gpuWithoutTs GPU activities without a {@code ts}: skipped
   */
  public record Header(
      Long baseTimeNanoseconds,
      long events,
      long minTsNs,
      long minTsAt,
      long maxEndNs,
      long maxEndAt,
      long negativeDurs,
      long firstNegativeDurAt,
      long gpuWithoutTs,
      long firstGpuWithoutTsAt) {
    /** Adds what was kept to {@code w}. */
    public void warnings(Warnings w) {
      w.add(
          "events with a negative dur (CUPTI records without an end): kept as zero-length",
          negativeDurs,
          "traceEvents[" + firstNegativeDurAt + "]");
      w.add(
          "GPU activities without a ts: skipped",
          gpuWithoutTs,
          "traceEvents[" + firstGpuWithoutTsAt + "]");
    }
  }

  /** Per scan: the running figures the {@link Header} reports. */
  private static final class Stats {
    long events;
    long minTs = Long.MAX_VALUE;
    long minTsAt = -1;
    long maxEnd = Long.MIN_VALUE;
    long maxEndAt = -1;
    long negativeDurs;
    long firstNegativeDurAt = -1;
    long gpuWithoutTs;
    long firstGpuWithoutTsAt = -1;
  }

  private KinetoTrace() {}

  /** Reads the whole file once, handing each event to {@code visitor}. */
  public static Header scan(
      Path file, ImportProgress progress, long base, long total, Visitor visitor)
      throws InvalidExportException {
    Event ev = new Event();
    Long baseTime = null;
    Stats stats = new Stats();
    boolean sawEvents = false;
    try (InputStream in = Inputs.open(file, progress, base, total);
        JsonParser p = InputFiles.jsonParser(in)) {
      JsonToken t = p.nextToken();
      if (t == null) {
        throw new InvalidExportException(file, "empty file");
      }
      if (t == JsonToken.START_ARRAY) {
        // Chrome "JSON Array Format": the document is the event list itself.
        sawEvents = true;
        readEvents(file, p, ev, visitor, stats);
      } else if (t == JsonToken.START_OBJECT) {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String field = p.currentName();
          JsonToken v = p.nextToken();
          if ("traceEvents".equals(field)) {
            if (v != JsonToken.START_ARRAY) {
              throw new InvalidExportException(file, "traceEvents is not an array");
            }
            sawEvents = true;
            readEvents(file, p, ev, visitor, stats);
          } else if ("baseTimeNanoseconds".equals(field) && v != JsonToken.VALUE_NULL) {
            baseTime = baseTime(file, p, v);
          } else {
            p.skipChildren();
          }
        }
      } else {
        throw new InvalidExportException(file, "not a Chrome/Kineto trace: the document is a " + t);
      }
      if (!sawEvents) {
        throw new InvalidExportException(file, "not a Kineto trace: no traceEvents array");
      }
      if (p.nextToken() != null) {
        throw new InvalidExportException(file, "trailing content after the trace document");
      }
    } catch (IOException e) {
      throw Inputs.invalid(file, e);
    }
    return new Header(
        baseTime,
        stats.events,
        stats.minTs,
        stats.minTsAt,
        stats.maxEnd,
        stats.maxEndAt,
        stats.negativeDurs,
        stats.firstNegativeDurAt,
        stats.gpuWithoutTs,
        stats.firstGpuWithoutTsAt);
  }

  /**
   * {@code baseTimeNanoseconds}: Unix ns, an integer (number or string) that fits a long, not
   * negative.
   */
  private static long baseTime(Path file, JsonParser p, JsonToken v) throws IOException {
    String text = p.getText().trim();
    long value;
    try {
      if (v == JsonToken.VALUE_NUMBER_INT
          && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
        value = p.getLongValue();
      } else if (v == JsonToken.VALUE_STRING || v == JsonToken.VALUE_NUMBER_INT) {
        value = Long.parseLong(text); // a BIG_INTEGER fails here too
      } else {
        throw new NumberFormatException();
      }
    } catch (NumberFormatException e) {
      boolean digits =
          !text.isEmpty()
              && text.chars().skip(text.charAt(0) == '-' ? 1 : 0).allMatch(Character::isDigit);
      throw new InvalidExportException(
          file,
          "baseTimeNanoseconds: "
              + quote(text)
              + (digits && text.length() > 1
                  ? " ns " + (text.startsWith("-") ? Limits.BEFORE_1970 : Limits.PAST_2262)
                  : " is not an integer (Unix ns)"));
    }
    if (value < 0) {
      throw new InvalidExportException(
          file, "baseTimeNanoseconds: " + value + " ns " + Limits.BEFORE_1970);
    }
    return value;
  }

  private static void readEvents(Path file, JsonParser p, Event ev, Visitor visitor, Stats stats)
      throws IOException {
    long position = 0;
    JsonToken t;
    while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
      if (t == null) {
        throw new InvalidExportException(file, "traceEvents ends early (truncated file)");
      }
      long index = position++;
      if (t != JsonToken.START_OBJECT) {
        p.skipChildren();
        continue;
      }
      ev.clear();
      ev.index = index;
      readEvent(file, p, ev);
      check(file, ev, stats);
      stats.events++;
      visitor.event(ev);
    }
  }

  /** What is checked once an event is read whole (its fields come in any order). */
  private static void check(Path file, Event ev, Stats stats) throws InvalidExportException {
    if (ev.durNs < 0) {
      if (stats.negativeDurs++ == 0) {
        stats.firstNegativeDurAt = ev.index;
      }
      ev.durNs = 0;
    }
    if (ev.hasTs) {
      long ts = ev.tsNs;
      if (ts > Long.MAX_VALUE - ev.durNs) {
        throw bad(
            file,
            ev,
            "dur",
            Decimals.nanosAsMicros(ts)
                + " µs + "
                + Decimals.nanosAsMicros(ev.durNs)
                + " µs "
                + Limits.PAST_2262);
      }
      long end = ts + ev.durNs;
      if (ts < stats.minTs) {
        stats.minTs = ts;
        stats.minTsAt = ev.index;
      }
      if (end > stats.maxEnd) {
        stats.maxEnd = end;
        stats.maxEndAt = ev.index;
      }
    }
    int kind = ev.gpuKind();
    if (kind >= 0) {
      if (!ev.hasTs) {
        if (stats.gpuWithoutTs++ == 0) {
          stats.firstGpuWithoutTsAt = ev.index;
        }
        return;
      }
      if (ev.badField != null) {
        throw bad(file, ev, "args." + ev.badField, quote(ev.badText) + " is not an integer");
      }
      if (ev.bytes < -1) {
        throw bad(file, ev, "args.bytes", ev.bytes + " is negative");
      }
      long device = ev.gpuDevice();
      if (!Limits.fitsDevice(device)) {
        throw bad(
            file,
            ev,
            ev.hasDevice ? "args.device" : "pid",
            ev.hasDevice || ev.numericPid
                ? Limits.device(device)
                : "no args.device, and pid is not a number");
      }
      long stream = ev.gpuStream();
      if (!Limits.fitsUint32(stream)) {
        throw bad(
            file,
            ev,
            ev.hasStream ? "args.stream" : "tid",
            ev.hasStream || ev.numericTid
                ? Limits.stream(stream)
                : "no args.stream, and tid is not a number");
      }
    } else if (ev.badField != null
        && (ev.badField.equals("correlation") || ev.badField.equals("External id"))
        && (ev.isLaunchCategory() || "cpu_op".equals(ev.cat))) {
      // the ids that join a kernel to its launch: a garbled one would leave kernels unattributed
      // unsaid
      throw bad(file, ev, "args." + ev.badField, quote(ev.badText) + " is not an integer");
    }
  }

  private static InvalidExportException bad(Path file, Event ev, String field, String problem) {
    return new InvalidExportException(
        file, "traceEvents[" + ev.index + "]." + field + ": " + problem);
  }

  private static String quote(String text) {
    return "'" + (text.length() > 64 ? text.substring(0, 64) + "..." : text) + "'";
  }

  private static void readEvent(Path file, JsonParser p, Event ev) throws IOException {
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String f = p.currentName();
      JsonToken v = p.nextToken();
      switch (f) {
        case "ph":
          ev.ph = p.getText();
          break;
        case "cat":
          ev.cat = p.getText();
          break;
        case "name":
          ev.name = v == JsonToken.VALUE_STRING ? p.getText() : null;
          if (v.isStructStart()) {
            p.skipChildren();
          }
          break;
        case "pid":
          ev.pid = idOf(p, v);
          ev.numericPid = v != JsonToken.VALUE_STRING || ev.pid >= 0 || isInteger(p.getText());
          ev.numericThread &= ev.numericPid;
          if (!ev.numericPid) {
            ev.pid = nameKey(p.getText());
          }
          break;
        case "tid":
          ev.tid = idOf(p, v);
          ev.numericTid = v != JsonToken.VALUE_STRING || ev.tid >= 0 || isInteger(p.getText());
          ev.numericThread &= ev.numericTid;
          if (!ev.numericTid) {
            ev.tid = nameKey(p.getText());
          }
          break;
        case "ts":
          if (v.isNumeric() || v == JsonToken.VALUE_STRING) {
            ev.tsNs = micros(file, p, ev, "ts");
            ev.hasTs = true;
          }
          break;
        case "dur":
          if (v.isNumeric() || v == JsonToken.VALUE_STRING) {
            ev.durNs = micros(file, p, ev, "dur");
          }
          break;
        case "args":
          if (v == JsonToken.START_OBJECT) {
            readArgs(p, ev);
          } else {
            p.skipChildren();
          }
          break;
        default:
          p.skipChildren();
      }
    }
  }

  /**
   * A {@code ts} or {@code dur}: microseconds, to exact nanoseconds; refused when malformed or out
   * of range.
   */
  private static long micros(Path file, JsonParser p, Event ev, String field) throws IOException {
    String text = p.getText().trim();
    try {
      return Decimals.microsToNanos(text);
    } catch (NumberFormatException e) {
      throw bad(file, ev, field, quote(text) + " is not a number (µs)");
    } catch (ArithmeticException e) {
      throw bad(
          file,
          ev,
          field,
          text
              + " µs "
              + (text.startsWith("-")
                  ? "is before year 1677 (Unix ns overflow)"
                  : Limits.PAST_2262));
    }
  }

  private static void readArgs(JsonParser p, Event ev) throws IOException {
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String f = p.currentName();
      JsonToken v = p.nextToken();
      if (v.isStructStart()) {
        p.skipChildren();
        continue;
      }
      switch (f) {
        case "correlation":
          ev.correlation = argOf(p, v, ev, f);
          break;
        case "External id":
          ev.externalId = argOf(p, v, ev, f);
          break;
        case "device":
          ev.device = argOf(p, v, ev, f);
          ev.hasDevice = v != JsonToken.VALUE_NULL;
          break;
        case "stream":
          ev.stream = argOf(p, v, ev, f);
          ev.hasStream = v != JsonToken.VALUE_NULL;
          break;
        case "bytes":
          ev.bytes = argOf(p, v, ev, f);
          break;
        default:
          break;
      }
    }
  }

  /**
   * An integer argument: a number, or a string of one (ROCm writes streams as {@code "0x0"}).
   * Anything else is {@link #BAD}, noted in the event; whether that matters depends on the event
   * (see {@link #check}): other events carry such fields too and are not read.
   */
  private static long argOf(JsonParser p, JsonToken v, Event ev, String field) throws IOException {
    if (v == JsonToken.VALUE_NUMBER_INT) {
      if (p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
        return p.getLongValue();
      }
    } else if (v == JsonToken.VALUE_NUMBER_FLOAT) {
      double d = p.getDoubleValue();
      if (d == Math.rint(d) && Math.abs(d) < 0x1p62) {
        return (long) d;
      }
    } else if (v == JsonToken.VALUE_STRING) {
      String s = p.getText().trim();
      try {
        return s.startsWith("0x") || s.startsWith("0X")
            ? Long.parseLong(s.substring(2), 16)
            : Long.parseLong(s);
      } catch (NumberFormatException e) {
        // falls through to BAD
      }
    } else {
      return -1; // null, true/false: not given
    }
    if (ev.badField == null) {
      ev.badField = field;
      ev.badText = p.getText();
    }
    return BAD;
  }

  private static long idOf(JsonParser p, JsonToken v) throws IOException {
    if (v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
      return p.getLongValue();
    }
    if (v == JsonToken.VALUE_STRING) {
      try {
        return Long.parseLong(p.getText().trim());
      } catch (NumberFormatException e) {
        return -1; // a name, see nameKey
      }
    }
    if (v.isStructStart()) {
      p.skipChildren();
    }
    return -1;
  }

  private static boolean isInteger(String s) {
    try {
      Long.parseLong(s.trim());
      return true;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /** A process or thread named rather than numbered ({@code "Spans"}): a key no number takes. */
  private static long nameKey(String s) {
    return s.hashCode() & 0xffffffffL | (1L << 40);
  }
}
