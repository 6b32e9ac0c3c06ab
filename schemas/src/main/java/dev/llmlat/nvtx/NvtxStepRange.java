package dev.llmlat.nvtx;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The llmlat NVTX step-range format, written once for the scheduler SDK that pushes it and the GPU
 * importers and eBPF bridge that read it back (schemas/formats/nvtx-step-range.md): {@code llmlat
 * step=<16hex step span id> kind=<prefill|decode|mixed> traces=<32hex>[,<32hex>...]}.
 */
public final class NvtxStepRange {
  private static final String TRACE_ID = "[0-9a-fA-F]{32}";

  /**
   * The whole text, with named groups {@code step}, {@code kind} and {@code traces}
   * (comma-separated trace ids). Hex is accepted in either case on reading; writers use lowercase.
   */
  public static final Pattern PATTERN =
      Pattern.compile(
          "llmlat step=(?<step>[0-9a-fA-F]{16})"
              + " kind=(?<kind>prefill|decode|mixed) traces=(?<traces>"
              + TRACE_ID
              + "(?:,"
              + TRACE_ID
              + ")*)");

  /** The step kinds the format names. */
  public static final List<String> KINDS = List.of("prefill", "decode", "mixed");

  private NvtxStepRange() {}

  /**
   * The range text for a step; arguments are not checked here (the SDK's {@code NvtxRange} does).
   */
  public static String text(String stepSpanId, String kind, List<String> traceIds) {
    return "llmlat step=" + stepSpanId + " kind=" + kind + " traces=" + String.join(",", traceIds);
  }
}
