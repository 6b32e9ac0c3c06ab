package dev.llmlat.gpu.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.llmlat.gpu.ImportProgress;
import dev.llmlat.gpu.InvalidExportException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Streams the events of a Kineto / PyTorch profiler Chrome trace (plain or gzip) without holding
 * the document: one reusable {@link Event} per {@code traceEvents} element. Timestamps stay in the
 * trace's microseconds (whatever {@code displayTimeUnit} says) and are turned into exact nanoseconds.
 */
public final class KinetoTrace {
  /** One trace event; fields not present are -1 / null. Reused between calls. */
  public static final class Event {
    public String ph;
    public String cat;
    public String name;
    public long pid;
    public long tid;
    public boolean numericThread;
    public long tsNs;
    public long durNs;
    public boolean hasTs;
    public long correlation;
    public long externalId;
    public long device;
    public long stream;
    public long bytes;

    void clear() {
      ph = null;
      cat = null;
      name = null;
      pid = -1;
      tid = -1;
      numericThread = true;
      tsNs = 0;
      durNs = 0;
      hasTs = false;
      correlation = -1;
      externalId = -1;
      device = -1;
      stream = -1;
      bytes = -1;
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
      if (cat == null || correlation < 0) {
        return false;
      }
      String c = cat.toLowerCase(Locale.ROOT);
      return c.equals("cuda_runtime") || c.equals("cuda_driver") || c.equals("runtime") || c.equals("driver");
    }
  }

  /** Receives events in file order. */
  public interface Visitor {
    void event(Event e) throws IOException;
  }

  /** What the header said. */
  public record Header(Long baseTimeNanoseconds, long events) {}

  private KinetoTrace() {}

  /** Reads the whole file once, handing each event to {@code visitor}. */
  public static Header scan(Path file, ImportProgress progress, long base, long total, Visitor visitor)
      throws InvalidExportException {
    Event ev = new Event();
    Long baseTime = null;
    long events = 0;
    boolean sawEvents = false;
    try (InputStream in = Inputs.open(file, progress, base, total); JsonParser p = Inputs.parser(in)) {
      JsonToken t = p.nextToken();
      if (t == null) {
        throw new InvalidExportException(file, "empty file");
      }
      if (t == JsonToken.START_ARRAY) {
        // Chrome "JSON Array Format": the document is the event list itself.
        sawEvents = true;
        events += readEvents(file, p, ev, visitor);
      } else if (t == JsonToken.START_OBJECT) {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String field = p.currentName();
          JsonToken v = p.nextToken();
          if ("traceEvents".equals(field)) {
            if (v != JsonToken.START_ARRAY) {
              throw new InvalidExportException(file, "traceEvents is not an array");
            }
            sawEvents = true;
            events += readEvents(file, p, ev, visitor);
          } else if ("baseTimeNanoseconds".equals(field) && v.isNumeric()) {
            baseTime = p.getLongValue();
          } else if ("baseTimeNanoseconds".equals(field) && v == JsonToken.VALUE_STRING) {
            baseTime = Long.parseLong(p.getText().trim());
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
    } catch (NumberFormatException | ArithmeticException e) {
      throw new InvalidExportException(file, "bad number in trace", e);
    }
    return new Header(baseTime, events);
  }

  private static long readEvents(Path file, JsonParser p, Event ev, Visitor visitor) throws IOException {
    long n = 0;
    JsonToken t;
    while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
      if (t == null) {
        throw new InvalidExportException(file, "traceEvents ends early (truncated file)");
      }
      if (t != JsonToken.START_OBJECT) {
        p.skipChildren();
        continue;
      }
      ev.clear();
      readEvent(p, ev);
      n++;
      visitor.event(ev);
    }
    return n;
  }

  private static void readEvent(JsonParser p, Event ev) throws IOException {
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
          ev.pid = idOf(p, v, ev);
          break;
        case "tid":
          ev.tid = idOf(p, v, ev);
          break;
        case "ts":
          if (v.isNumeric() || v == JsonToken.VALUE_STRING) {
            ev.tsNs = Decimals.microsToNanos(p.getText().trim());
            ev.hasTs = true;
          }
          break;
        case "dur":
          if (v.isNumeric() || v == JsonToken.VALUE_STRING) {
            ev.durNs = Decimals.microsToNanos(p.getText().trim());
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
          ev.correlation = longOf(p, v);
          break;
        case "External id":
          ev.externalId = longOf(p, v);
          break;
        case "device":
          ev.device = longOf(p, v);
          break;
        case "stream":
          ev.stream = longOf(p, v);
          break;
        case "bytes":
          ev.bytes = longOf(p, v);
          break;
        default:
          break;
      }
    }
  }

  private static long longOf(JsonParser p, JsonToken v) throws IOException {
    if (v == JsonToken.VALUE_NUMBER_INT) {
      return p.getLongValue();
    }
    if (v == JsonToken.VALUE_NUMBER_FLOAT) {
      return (long) p.getDoubleValue();
    }
    if (v == JsonToken.VALUE_STRING) {
      try {
        return Long.parseLong(p.getText().trim());
      } catch (NumberFormatException e) {
        return -1;
      }
    }
    return -1;
  }

  private static long idOf(JsonParser p, JsonToken v, Event ev) throws IOException {
    if (v == JsonToken.VALUE_NUMBER_INT) {
      return p.getLongValue();
    }
    if (v == JsonToken.VALUE_STRING) {
      String s = p.getText();
      try {
        return Long.parseLong(s.trim());
      } catch (NumberFormatException e) {
        ev.numericThread = false;
        return s.hashCode() & 0xffffffffL | (1L << 40);
      }
    }
    if (v.isStructStart()) {
      p.skipChildren();
    }
    return -1;
  }
}
