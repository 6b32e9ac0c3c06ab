package dev.llmlat.ebpf;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Reads {@code bpftrace -f json} output. Each line is an envelope {@code {"type":..,"data":..}};
 * {@code printf} envelopes carry one probe line (probes/README.md), {@code attached_probes} says
 * the probes are live. Anything else (map dumps, lost-event notices) is reported as {@link Other}.
 */
public final class ProbeOutputParser {
  private static final JsonFactory JSON = new JsonFactory();
  private static final String TEXT_FIELD = ",\"text\":\"";

  /** What one envelope line held. */
  public sealed interface Line {}

  public record Event(ProbeEvent event) implements Line {}

  public record Attached(int probes) implements Line {}

  /** bpftrace lost events because the perf buffer was full. */
  public record Lost(long count) implements Line {}

  public record Other(String type) implements Line {}

  /**
   * @throws IllegalArgumentException when the line is not an envelope or its probe line is
   *     malformed
   */
  public Line parse(String line) {
    String type = null;
    String data = null;
    int probes = -1;
    long lost = -1;
    try (JsonParser p = JSON.createParser(line)) {
      expect(p.nextToken() == JsonToken.START_OBJECT, line);
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        if ("type".equals(field)) {
          type = p.getText();
        } else if ("data".equals(field) && value == JsonToken.VALUE_STRING) {
          data = p.getText();
        } else if ("data".equals(field) && value == JsonToken.START_OBJECT) {
          while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if ("probes".equals(name) && v == JsonToken.VALUE_NUMBER_INT) {
              probes = p.getIntValue();
            } else if (v == JsonToken.VALUE_NUMBER_INT) {
              lost = p.getLongValue();
            } else {
              p.skipChildren();
            }
          }
        } else if ("data".equals(field) && value == JsonToken.VALUE_NUMBER_INT) {
          lost = p.getLongValue();
        } else {
          p.skipChildren();
        }
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("not a bpftrace JSON line: " + abbreviate(line), e);
    }
    expect(type != null, line);
    switch (type) {
      case "printf":
        expect(data != null, line);
        return new Event(parseProbeLine(data.strip()));
      case "attached_probes":
        return new Attached(probes);
      case "lost_events":
        return new Lost(Math.max(lost, 0));
      default:
        return new Other(type);
    }
  }

  /** One probe line, e.g. {@code {"e":"launch","pid":1,...}}. */
  public ProbeEvent parseProbeLine(String line) {
    String text = null;
    String json = line;
    int t = line.indexOf(TEXT_FIELD);
    if (t >= 0) {
      // The text is raw (bpftrace cannot escape it): everything up to the final "}.
      expect(line.endsWith("\"}"), line);
      text = line.substring(t + TEXT_FIELD.length(), line.length() - 2);
      json = line.substring(0, t) + "}";
    }
    Map<String, Object> f = fields(json);
    String e = str(f, "e");
    long pid = num(f, "pid");
    long tid = num(f, "tid");
    long ns = num(f, "ns");
    switch (e) {
      case "launch":
        return new ProbeEvent.Launch(
            pid,
            tid,
            ns,
            str(f, "api"),
            num(f, "func"),
            dims(f, "grid"),
            dims(f, "block"),
            num(f, "smem"),
            num(f, "stream"));
      case "sync":
        return new ProbeEvent.Sync(
            pid, tid, ns, num(f, "end_ns"), str(f, "api"), num(f, "handle"), (int) num(f, "ret"));
      case "text":
        expect(text != null, line);
        return new ProbeEvent.TextChunk(
            pid, tid, ns, (int) num(f, "off"), (int) num(f, "total"), text);
      case "push":
        return new ProbeEvent.Push(pid, tid, ns, (int) num(f, "total"));
      case "pop":
        return new ProbeEvent.Pop(pid, tid, ns);
      case "start":
        return new ProbeEvent.Start(pid, tid, ns, num(f, "id"), (int) num(f, "total"));
      case "end":
        return new ProbeEvent.End(pid, tid, ns, num(f, "id"));
      default:
        throw new IllegalArgumentException("unknown probe event '" + e + "': " + abbreviate(line));
    }
  }

  private static Map<String, Object> fields(String json) {
    Map<String, Object> out = new HashMap<>();
    try (JsonParser p = JSON.createParser(json)) {
      expect(p.nextToken() == JsonToken.START_OBJECT, json);
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken v = p.nextToken();
        if (v == JsonToken.START_ARRAY) {
          int[] dims = new int[3];
          int i = 0;
          while (p.nextToken() != JsonToken.END_ARRAY) {
            if (i < 3) {
              dims[i] = (int) p.getLongValue();
            }
            i++;
          }
          out.put(name, dims);
        } else if (v == JsonToken.VALUE_NUMBER_INT) {
          // bpftrace prints %llu: addresses above 2^63 arrive as unsigned decimals.
          out.put(
              name,
              p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
                  ? p.getBigIntegerValue().longValue()
                  : p.getLongValue());
        } else {
          out.put(name, p.getText());
        }
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("malformed probe line: " + abbreviate(json), e);
    }
    return out;
  }

  private static long num(Map<String, Object> f, String name) {
    Object v = f.get(name);
    if (!(v instanceof Long l)) {
      throw new IllegalArgumentException("probe line lacks number '" + name + "': " + f);
    }
    return l;
  }

  private static String str(Map<String, Object> f, String name) {
    Object v = f.get(name);
    if (!(v instanceof String s)) {
      throw new IllegalArgumentException("probe line lacks '" + name + "': " + f);
    }
    return s;
  }

  private static int[] dims(Map<String, Object> f, String name) {
    return Optional.ofNullable(f.get(name))
        .filter(int[].class::isInstance)
        .map(int[].class::cast)
        .orElse(new int[3]);
  }

  private static void expect(boolean ok, String line) {
    if (!ok) {
      throw new IllegalArgumentException("malformed bpftrace line: " + abbreviate(line));
    }
  }

  private static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "...";
  }
}
