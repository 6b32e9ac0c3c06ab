package dev.llmlat.scheduler;

import java.util.Locale;

/**
 * What an engine step computed: only prompt tokens, only one token per running request, or both.
 */
public enum StepKind {
  PREFILL,
  DECODE,
  MIXED;

  /** The lowercase name written in {@code llmlat.step.kind} and in NVTX range text. */
  public String value() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static StepKind of(int prefillTokens, int decodeTokens) {
    if (prefillTokens > 0 && decodeTokens > 0) {
      return MIXED;
    }
    if (prefillTokens > 0) {
      return PREFILL;
    }
    if (decodeTokens > 0) {
      return DECODE;
    }
    throw new IllegalArgumentException("a step computes at least one token");
  }

  public static StepKind fromValue(String value) {
    for (StepKind kind : values()) {
      if (kind.value().equals(value)) {
        return kind;
      }
    }
    throw new IllegalArgumentException("unknown step kind '" + value + "' (prefill|decode|mixed)");
  }
}
