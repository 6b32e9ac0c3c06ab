package dev.llmlat.gpu.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.llmlat.gpu.ImportProgress;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.nvtx.RangeMatch;
import dev.llmlat.otlpjson.InputFiles;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Reads cudaEvent JSONL (see schemas/formats/gpu-exports.md): one step per line, bracketed by two
 * CUDA events.
 */
public final class CudaEventLog {
  public static final String RULE = "cudaevent:host_submit_unix_ns+gpu_elapsed_ms*1e6";
  private static final Pattern TRACE_ID = Pattern.compile("[0-9a-fA-F]{32}");
  private static final Pattern SPAN_ID = Pattern.compile("[0-9a-fA-F]{16}");

  /** One step: its GPU bracket in Unix ns. */
  public record Step(RangeMatch match, long startNs, long endNs, Long hostDoneNs) {}

  public interface Visitor {
    void step(Step step);
  }

  private CudaEventLog() {}

  /** Reads every line, in order; the first bad line fails the whole file with its line number. */
  public static long scan(
      Path file, ImportProgress progress, long base, long total, Visitor visitor)
      throws InvalidExportException {
    long n = 0;
    int lineNo = 0;
    try (InputStream in = Inputs.open(file, progress, base, total);
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        lineNo++;
        if (line.isBlank()) {
          continue;
        }
        visitor.step(parse(file, lineNo, line));
        n++;
      }
    } catch (IOException e) {
      throw Inputs.invalid(file, e);
    }
    if (n == 0) {
      throw new InvalidExportException(file, "no cudaEvent steps (empty file)");
    }
    return n;
  }

  private static Step parse(Path file, int lineNo, String line) throws IOException {
    String kind = null;
    String stepSpanId = null;
    List<String> traces = null;
    Long submit = null;
    BigDecimal elapsedMs = null;
    String elapsedText = null;
    Long done = null;
    try (JsonParser p =
        InputFiles.jsonParser(
            new java.io.ByteArrayInputStream(line.getBytes(StandardCharsets.UTF_8)))) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw bad(file, lineNo, "not a JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String f = p.currentName();
        JsonToken v = p.nextToken();
        switch (f) {
          case "kind":
            kind = v == JsonToken.VALUE_STRING ? p.getText().toLowerCase(Locale.ROOT) : null;
            break;
          case "step_span_id":
            stepSpanId = v == JsonToken.VALUE_STRING ? p.getText() : null;
            break;
          case "trace_ids":
            if (v != JsonToken.START_ARRAY) {
              throw bad(file, lineNo, "trace_ids is not an array");
            }
            traces = new ArrayList<>();
            while (p.nextToken() == JsonToken.VALUE_STRING) {
              traces.add(p.getText());
            }
            if (p.currentToken() != JsonToken.END_ARRAY) {
              throw bad(file, lineNo, "trace_ids holds a non-string");
            }
            break;
          case "host_submit_unix_ns":
            submit = unixNs(file, lineNo, p, v, f);
            break;
          case "host_done_unix_ns":
            done = unixNs(file, lineNo, p, v, f);
            break;
          case "gpu_elapsed_ms":
            if (v.isNumeric()) {
              elapsedMs = p.getDecimalValue();
              elapsedText = p.getText();
            } else if (v != JsonToken.VALUE_NULL) {
              throw bad(file, lineNo, "gpu_elapsed_ms: '" + p.getText() + "' is not a number (ms)");
            }
            break;
          default:
            p.skipChildren();
        }
      }
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw bad(file, lineNo, "malformed JSON (" + e.getOriginalMessage() + ")");
    }
    if (submit == null || elapsedMs == null || traces == null) {
      throw bad(
          file,
          lineNo,
          "needs host_submit_unix_ns (integer), gpu_elapsed_ms (number) and trace_ids");
    }
    if (elapsedMs.signum() < 0) {
      throw bad(file, lineNo, "gpu_elapsed_ms: " + elapsedText + " is negative");
    }
    // Compared before rescaling: 1e308 ms would otherwise become a 300-digit number, and end as
    // garbage or an exception without the line.
    if (elapsedMs.compareTo(MAX_ELAPSED_MS) > 0) {
      throw bad(
          file,
          lineNo,
          "gpu_elapsed_ms: "
              + elapsedText
              + " ms after host_submit_unix_ns "
              + submit
              + " "
              + Limits.PAST_2262);
    }
    if (traces.isEmpty()) {
      throw bad(file, lineNo, "trace_ids is empty");
    }
    for (int i = 0; i < traces.size(); i++) {
      if (!TRACE_ID.matcher(traces.get(i)).matches()) {
        throw bad(file, lineNo, "trace id '" + traces.get(i) + "' is not 32 hex digits");
      }
      traces.set(i, traces.get(i).toLowerCase(Locale.ROOT));
    }
    if (stepSpanId != null && !SPAN_ID.matcher(stepSpanId).matches()) {
      throw bad(file, lineNo, "step_span_id '" + stepSpanId + "' is not 16 hex digits");
    }
    long elapsedNs = elapsedMs.movePointRight(6).setScale(0, RoundingMode.HALF_UP).longValueExact();
    if (elapsedNs > Long.MAX_VALUE - submit) {
      throw bad(
          file,
          lineNo,
          "gpu_elapsed_ms: "
              + elapsedText
              + " ms after host_submit_unix_ns "
              + submit
              + " "
              + Limits.PAST_2262);
    }
    return new Step(
        new RangeMatch(
            kind, stepSpanId == null ? null : stepSpanId.toLowerCase(Locale.ROOT), traces),
        submit,
        submit + elapsedNs,
        done);
  }

  /**
   * The most gpu_elapsed_ms that can be nanoseconds in a long at all (checked before rescaling).
   */
  private static final BigDecimal MAX_ELAPSED_MS =
      BigDecimal.valueOf(Long.MAX_VALUE).movePointLeft(6);

  /**
   * A host clock reading: an integer of Unix ns in a long, not negative. Absent or null: null (the
   * caller says which are needed); anything else is refused naming the field.
   */
  private static Long unixNs(Path file, int line, JsonParser p, JsonToken v, String field)
      throws IOException {
    if (v == JsonToken.VALUE_NULL) {
      return null;
    }
    if (v != JsonToken.VALUE_NUMBER_INT) {
      p.skipChildren();
      throw bad(
          file,
          line,
          field
              + ": "
              + (v.isScalarValue() ? "'" + p.getText() + "'" : "an " + v)
              + " is not an integer (Unix ns)");
    }
    if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
      throw bad(
          file,
          line,
          field
              + ": "
              + p.getText()
              + " "
              + (p.getText().startsWith("-") ? Limits.BEFORE_1970 : Limits.PAST_2262));
    }
    long value = p.getLongValue();
    if (value < 0) {
      throw bad(file, line, field + ": " + value + " " + Limits.BEFORE_1970);
    }
    return value;
  }

  private static InvalidExportException bad(Path file, int line, String problem) {
    return new InvalidExportException(file, "line " + line + ": " + problem);
  }
}
