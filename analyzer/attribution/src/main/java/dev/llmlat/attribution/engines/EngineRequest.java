package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;
import java.util.List;

/**
 * One request as an engine reported it, in the analyzer's terms, whatever the engine's own
 * conventions: when it arrived, waited, had its KV cache moved, ran its prefill chunks, sampled its
 * first token and decoded the rest. Times are Unix ns on the engine's clock (aligned before the
 * adapters read them); -1 where the engine does not tell.
 *
 * @param adapter the adapter that read it ({@link EngineAdapter#name()})
 * @param span the engine's span that stands for the request: its parent is the span the engine
 *     received in {@code traceparent}, its clock and instance are the engine's
 * @param arrivalNs when the engine stamped the request's arrival
 * @param handling the engine's handling of the request before its scheduler's queue (templating,
 *     tokenization, dispatch, validation), where the engine traces it
 * @param queuedNs when it entered the scheduler's waiting queue (the arrival where the engine does
 *     not tell apart)
 * @param scheduledNs when it left the waiting queue, or -1
 * @param waits further waiting intervals the engine reports as spans (queue, prefill_waiting...)
 * @param kvTransfers KV-cache transfers (disaggregated serving)
 * @param prefills the forward passes that ran this request's prompt, in order
 * @param firstTokenNs the first token's time, or -1
 * @param decodeTokenNs the later tokens' times (empty where the engine keeps none)
 * @param preemptionNs when the engine preempted the request
 * @param instance the engine instance (replica) that served it
 * @param notes how the engine was read and what it cannot show, for {@code explain} and reports
 */
public record EngineRequest(
    String adapter,
    SpanRecord span,
    long arrivalNs,
    long endNs,
    List<Interval> handling,
    long queuedNs,
    long scheduledNs,
    List<Interval> waits,
    List<Interval> kvTransfers,
    List<Prefill> prefills,
    long firstTokenNs,
    long[] decodeTokenNs,
    List<Long> preemptionNs,
    String model,
    String requestId,
    String finishReason,
    long promptTokens,
    long outputTokens,
    String instance,
    List<String> notes) {

  /** A stretch of time the engine names, and the span (or attribute) that tells it. */
  public record Interval(long startNs, long endNs, String source) {}

  /**
   * One prefill forward pass.
   *
   * @param stepSpanId the engine step span that ran it ("" when the engine has none): joins GPU
   *     steps
   * @param tokens this request's prompt tokens in it (0 when unknown)
   * @param batchTokens all tokens of the pass (0 when unknown)
   * @param batchSize requests in the pass (0 when unknown)
   * @param coRequests the other requests' trace ids in the pass, where the engine names them
   */
  public record Prefill(
      long startNs,
      long endNs,
      String source,
      String stepSpanId,
      long tokens,
      long batchTokens,
      int batchSize,
      List<String> coRequests) {}

  public EngineRequest {
    handling = List.copyOf(handling);
    waits = List.copyOf(waits);
    kvTransfers = List.copyOf(kvTransfers);
    prefills = List.copyOf(prefills);
    preemptionNs = List.copyOf(preemptionNs);
    notes = List.copyOf(notes);
  }

  public String traceId() {
    return span.traceId();
  }

  public static Builder builder(String adapter, SpanRecord span) {
    return new Builder(adapter, span);
  }

  /** Collects what an adapter reads; unset times stay unknown (-1). */
  public static final class Builder {
    private final String adapter;
    private final SpanRecord span;
    private long arrivalNs;
    private long endNs;
    private final List<Interval> handling = new java.util.ArrayList<>();
    private long queuedNs = -1;
    private long scheduledNs = -1;
    private final List<Interval> waits = new java.util.ArrayList<>();
    private final List<Interval> kvTransfers = new java.util.ArrayList<>();
    private final List<Prefill> prefills = new java.util.ArrayList<>();
    private long firstTokenNs = -1;
    private long[] decodeTokenNs = new long[0];
    private final List<Long> preemptionNs = new java.util.ArrayList<>();
    private String model = "";
    private String requestId = "";
    private String finishReason = "";
    private long promptTokens;
    private long outputTokens;
    private String instance;
    private final List<String> notes = new java.util.ArrayList<>();

    private Builder(String adapter, SpanRecord span) {
      this.adapter = adapter;
      this.span = span;
      this.arrivalNs = span.startNs();
      this.endNs = span.endNs();
      this.instance = span.engineInstance();
    }

    public Builder arrival(long ns) {
      arrivalNs = ns;
      return this;
    }

    public Builder end(long ns) {
      endNs = ns;
      return this;
    }

    public Builder queued(long ns) {
      queuedNs = ns;
      return this;
    }

    public Builder scheduled(long ns) {
      scheduledNs = ns;
      return this;
    }

    public Builder handling(long startNs, long endNs, String source) {
      handling.add(new Interval(startNs, endNs, source));
      return this;
    }

    public Builder wait(long startNs, long endNs, String source) {
      waits.add(new Interval(startNs, endNs, source));
      return this;
    }

    public Builder kvTransfer(long startNs, long endNs, String source) {
      kvTransfers.add(new Interval(startNs, endNs, source));
      return this;
    }

    public Builder prefill(Prefill p) {
      prefills.add(p);
      return this;
    }

    /** A prefill pass the engine reports only as an interval. */
    public Builder prefill(long startNs, long endNs, String source) {
      return prefill(new Prefill(startNs, endNs, source, "", 0, 0, 0, List.of()));
    }

    public Builder firstToken(long ns) {
      firstTokenNs = ns;
      return this;
    }

    public Builder decodeTokens(long[] times) {
      decodeTokenNs = times.clone();
      return this;
    }

    public Builder preempted(long ns) {
      preemptionNs.add(ns);
      return this;
    }

    public Builder model(String m) {
      model = m == null ? "" : m;
      return this;
    }

    public Builder requestId(String id) {
      requestId = id == null ? "" : id;
      return this;
    }

    public Builder finishReason(String reason) {
      finishReason = reason == null ? "" : reason;
      return this;
    }

    public Builder tokens(long prompt, long output) {
      promptTokens = prompt;
      outputTokens = output;
      return this;
    }

    public Builder instance(String i) {
      instance = i;
      return this;
    }

    public Builder note(String note) {
      notes.add(note);
      return this;
    }

    public EngineRequest build() {
      prefills.sort(java.util.Comparator.comparingLong(Prefill::startNs));
      waits.sort(java.util.Comparator.comparingLong(Interval::startNs));
      return new EngineRequest(
          adapter,
          span,
          arrivalNs,
          endNs,
          handling,
          queuedNs < 0 ? arrivalNs : queuedNs,
          scheduledNs,
          waits,
          kvTransfers,
          prefills,
          firstTokenNs,
          decodeTokenNs,
          preemptionNs,
          model,
          requestId,
          finishReason,
          promptTokens,
          outputTokens,
          instance,
          notes);
    }
  }
}
