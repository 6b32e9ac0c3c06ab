package dev.llmlat.scheduler;

import dev.llmlat.nvtx.NvtxStepRange;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The text of the NVTX range an engine pushes around one step's GPU work: {@code llmlat step=<16hex
 * step span id> kind=<prefill|decode|mixed> traces=<32hex>[,<32hex>...]}. GPU importers match
 * kernels to the range through the CUDA correlation id and read the step span and the request
 * traces back from it (format documented in schemas/formats/nvtx-step-range.md).
 */
public record NvtxRange(String stepSpanId, StepKind kind, List<String> traceIds) {
  private static final Pattern SPAN_ID = Pattern.compile("[0-9a-f]{16}");
  private static final Pattern TRACE_ID = Pattern.compile("[0-9a-f]{32}");
  private static final String ZERO_SPAN = "0000000000000000";
  private static final String ZERO_TRACE = "00000000000000000000000000000000";

  public NvtxRange {
    if (stepSpanId == null
        || !SPAN_ID.matcher(stepSpanId).matches()
        || ZERO_SPAN.equals(stepSpanId)) {
      throw new IllegalArgumentException(
          "step span id must be 16 lowercase hex digits, not all zero: " + stepSpanId);
    }
    if (kind == null) {
      throw new IllegalArgumentException("step kind is required");
    }
    if (traceIds == null || traceIds.isEmpty()) {
      throw new IllegalArgumentException("an NVTX step range names at least one trace");
    }
    for (String id : traceIds) {
      if (id == null || !TRACE_ID.matcher(id).matches() || ZERO_TRACE.equals(id)) {
        throw new IllegalArgumentException(
            "trace id must be 32 lowercase hex digits, not all zero: " + id);
      }
    }
    // Distinct, in order: a request served twice in one step is still one trace.
    traceIds = Collections.unmodifiableList(new ArrayList<>(new LinkedHashSet<>(traceIds)));
  }

  /** The range text, exactly as pushed with {@code nvtxRangePush}. */
  public String text() {
    return NvtxStepRange.text(stepSpanId, kind.value(), traceIds);
  }

  /** Parses range text; throws {@link IllegalArgumentException} naming what does not match. */
  public static NvtxRange parse(CharSequence text) {
    return tryParse(text)
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "not an llmlat NVTX step range (expected '"
                        + NvtxStepRange.PATTERN.pattern()
                        + "'): "
                        + text));
  }

  /** Parses range text, or empty when it is not an llmlat step range (e.g. another engine's). */
  public static Optional<NvtxRange> tryParse(CharSequence text) {
    if (text == null) {
      return Optional.empty();
    }
    Matcher m = NvtxStepRange.PATTERN.matcher(text);
    if (!m.matches()) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          new NvtxRange(
              m.group("step"),
              StepKind.fromValue(m.group("kind")),
              List.of(m.group("traces").split(","))));
    } catch (IllegalArgumentException e) {
      return Optional.empty(); // all-zero ids
    }
  }

  @Override
  public String toString() {
    return text();
  }
}
