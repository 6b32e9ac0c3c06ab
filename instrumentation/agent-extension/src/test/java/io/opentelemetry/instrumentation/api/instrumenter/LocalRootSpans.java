package io.opentelemetry.instrumentation.api.instrumenter;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;

/** Test access to how the agent's Instrumenter marks a SERVER span as the local root. */
public final class LocalRootSpans {
  private LocalRootSpans() {}

  public static Context store(Context context, Span span) {
    return LocalRootSpan.store(context, span);
  }
}
