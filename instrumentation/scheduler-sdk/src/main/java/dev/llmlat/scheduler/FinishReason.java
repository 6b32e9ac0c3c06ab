package dev.llmlat.scheduler;

import java.util.Locale;

/** Why a request ended, as written in {@code gen_ai.response.finish_reasons}. */
public enum FinishReason {
  /** A stop token or stop string. */
  STOP,
  /** {@code max_tokens} reached. */
  LENGTH,
  /** Cancelled or failed before finishing; the request span's status is ERROR. */
  ABORT;

  public String value() {
    return name().toLowerCase(Locale.ROOT);
  }
}
