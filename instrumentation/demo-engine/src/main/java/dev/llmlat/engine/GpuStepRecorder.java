package dev.llmlat.engine;

import static dev.llmlat.scheduler.SchedulerAttributes.*;

import dev.llmlat.scheduler.StepTrace;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.util.concurrent.TimeUnit;

/**
 * Emits the GPU layer's {@code step} span for each modelled step, as a GPU importer would from an
 * NVTX range (schemas/kafka/README.md): on the first served request's trace, under the engine step
 * span, one link per request, the NVTX text, {@code llmlat.gpu.source=engine}. Its tracer belongs
 * to a provider whose resource says {@code llmlat.layer=gpu}.
 */
final class GpuStepRecorder {
  private final Tracer tracer;

  GpuStepRecorder(Tracer tracer) {
    this.tracer = tracer;
  }

  void record(StepTrace step, long startNanos, long endNanos, long modelledNanos) {
    SpanBuilder builder =
        tracer
            .spanBuilder(SPAN_STEP)
            .setParent(Context.root().with(Span.wrap(step.spanContext())))
            .setStartTimestamp(startNanos, TimeUnit.NANOSECONDS)
            .setAttribute(STEP_KIND, step.kind().value())
            .setAttribute(STEP_SPAN_ID, step.spanContext().getSpanId())
            .setAttribute(TRACE_IDS, step.nvtxRange().traceIds())
            .setAttribute(NVTX_TEXT, step.nvtxRange().text())
            .setAttribute(STEP_BATCH_SIZE, (long) step.batchSize())
            .setAttribute(STEP_PREFILL_TOKENS, (long) step.prefillTokens())
            .setAttribute(STEP_DECODE_TOKENS, (long) step.decodeTokens())
            .setAttribute(EngineAttributes.GPU_BUSY_NS, endNanos - startNanos)
            .setAttribute(EngineAttributes.GPU_FIRST_KERNEL_START, startNanos)
            .setAttribute(EngineAttributes.GPU_LAST_KERNEL_END, endNanos)
            .setAttribute(EngineAttributes.GPU_SOURCE, EngineAttributes.SOURCE_ENGINE)
            .setAttribute(EngineAttributes.CLOCK_RULE, EngineAttributes.CLOCK_RULE_ENGINE)
            .setAttribute(EngineAttributes.MODELLED_STEP_NS, modelledNanos);
    for (SpanContext request : step.requests()) {
      builder.addLink(request);
    }
    builder.startSpan().end(endNanos, TimeUnit.NANOSECONDS);
  }
}
