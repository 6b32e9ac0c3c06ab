package dev.llmlat.scheduler;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The composition of one engine step, gathered before it runs: prefill chunks and decode requests,
 * in batch order. Obtain from {@link SchedulerTracer#newStep()}; single use.
 */
public final class StepBuilder {
  /** One request's share of a step. */
  record Entry(RequestTrace request, int prefillTokens, boolean decode) {}

  private final SchedulerTracer owner;
  private final List<Entry> entries = new ArrayList<>();
  private final Map<RequestTrace, Boolean> seen = new IdentityHashMap<>();
  private boolean started;

  StepBuilder(SchedulerTracer owner) {
    this.owner = owner;
  }

  /** The step prefills the next {@code tokens} prompt tokens of {@code request} (one chunk). */
  public StepBuilder prefill(RequestTrace request, int tokens) {
    Objects.requireNonNull(request, "request");
    if (tokens < 1 || tokens > request.prefillRemaining()) {
      throw new IllegalArgumentException(
          "request "
              + request.info().requestId()
              + " has "
              + request.prefillRemaining()
              + " tokens left to prefill, not "
              + tokens);
    }
    add(new Entry(request, tokens, false));
    return this;
  }

  /** The step decodes one token of {@code request}, whose prefill is complete. */
  public StepBuilder decode(RequestTrace request) {
    Objects.requireNonNull(request, "request");
    if (!request.canDecode()) {
      throw new IllegalArgumentException(
          "request "
              + request.info().requestId()
              + " cannot decode: its prefill is not complete or it has ended");
    }
    add(new Entry(request, 0, true));
    return this;
  }

  public boolean isEmpty() {
    return entries.isEmpty();
  }

  /** Starts the step now. */
  public StepTrace start() {
    return start(owner.clock().now());
  }

  /** Starts the step's span at {@code epochNanos}, linked to every request it serves. */
  public StepTrace start(long epochNanos) {
    if (started) {
      throw new IllegalStateException("this step was already started");
    }
    if (entries.isEmpty()) {
      throw new IllegalStateException("a step serves at least one request");
    }
    started = true;
    return new StepTrace(owner, List.copyOf(entries), epochNanos);
  }

  private void add(Entry entry) {
    if (started) {
      throw new IllegalStateException("this step was already started");
    }
    if (seen.put(entry.request(), Boolean.TRUE) != null) {
      throw new IllegalArgumentException(
          "request " + entry.request().info().requestId() + " is already in this step");
    }
    entries.add(entry);
  }
}
