package dev.llmlat.scheduler;

import static io.opentelemetry.api.common.AttributeKey.booleanKey;
import static io.opentelemetry.api.common.AttributeKey.doubleKey;
import static io.opentelemetry.api.common.AttributeKey.longArrayKey;
import static io.opentelemetry.api.common.AttributeKey.longKey;
import static io.opentelemetry.api.common.AttributeKey.stringArrayKey;
import static io.opentelemetry.api.common.AttributeKey.stringKey;

import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatSpanNames;
import io.opentelemetry.api.common.AttributeKey;
import java.util.List;

/**
 * Span names and attribute keys the scheduler SDK writes. Names shared with other layers come from
 * {@link LlmlatAttributes}; the GenAI and vLLM names are spelled exactly as vLLM's {@code
 * vllm/tracing.py} {@code SpanAttributes} spells them, so vLLM's own spans and ours read the same.
 * Every {@code llmlat.*} name is defined once, in schemas ({@link LlmlatAttributes}, {@link
 * LlmlatSpanNames}).
 */
public final class SchedulerAttributes {
  private SchedulerAttributes() {}

  // Span names
  /** The request span, as vLLM names it (kind SERVER). */
  public static final String SPAN_REQUEST = LlmlatSpanNames.REQUEST;

  public static final String SPAN_QUEUE = LlmlatSpanNames.QUEUE;
  public static final String SPAN_PREFILL = LlmlatSpanNames.PREFILL;
  public static final String SPAN_DECODE = LlmlatSpanNames.DECODE;
  public static final String SPAN_STEP = LlmlatSpanNames.STEP;

  // Resource
  public static final AttributeKey<String> LAYER = stringKey(LlmlatAttributes.LAYER);

  // OpenTelemetry GenAI conventions
  public static final AttributeKey<String> GEN_AI_OPERATION_NAME =
      stringKey("gen_ai.operation.name");
  public static final AttributeKey<String> GEN_AI_REQUEST_MODEL = stringKey("gen_ai.request.model");
  public static final AttributeKey<String> GEN_AI_RESPONSE_MODEL =
      stringKey("gen_ai.response.model");
  public static final AttributeKey<Long> GEN_AI_REQUEST_MAX_TOKENS =
      longKey("gen_ai.request.max_tokens");
  public static final AttributeKey<Long> GEN_AI_USAGE_INPUT_TOKENS =
      longKey("gen_ai.usage.input_tokens");
  public static final AttributeKey<Long> GEN_AI_USAGE_OUTPUT_TOKENS =
      longKey("gen_ai.usage.output_tokens");
  public static final AttributeKey<List<String>> GEN_AI_RESPONSE_FINISH_REASONS =
      stringArrayKey("gen_ai.response.finish_reasons");

  // vLLM's names (vllm/tracing.py SpanAttributes); latencies in seconds, as vLLM writes them.
  public static final AttributeKey<String> GEN_AI_REQUEST_ID = stringKey("gen_ai.request.id");
  public static final AttributeKey<Long> GEN_AI_USAGE_PROMPT_TOKENS =
      longKey("gen_ai.usage.prompt_tokens");
  public static final AttributeKey<Long> GEN_AI_USAGE_COMPLETION_TOKENS =
      longKey("gen_ai.usage.completion_tokens");

  /** First scheduled minus queued (vLLM: {@code scheduled_ts - queued_ts}). */
  public static final AttributeKey<Double> LATENCY_TIME_IN_QUEUE =
      doubleKey("gen_ai.latency.time_in_queue");

  /** First token minus arrival. */
  public static final AttributeKey<Double> LATENCY_TIME_TO_FIRST_TOKEN =
      doubleKey("gen_ai.latency.time_to_first_token");

  /** Finish minus arrival. */
  public static final AttributeKey<Double> LATENCY_E2E = doubleKey("gen_ai.latency.e2e");

  /** Sum of the durations of the engine steps that served the request. */
  public static final AttributeKey<Double> LATENCY_TIME_IN_SCHEDULER =
      doubleKey("gen_ai.latency.time_in_scheduler");

  /** First token minus first scheduled (vLLM: {@code first_token_ts - scheduled_ts}). */
  public static final AttributeKey<Double> LATENCY_TIME_IN_MODEL_PREFILL =
      doubleKey("gen_ai.latency.time_in_model_prefill");

  /** Last token minus first token. */
  public static final AttributeKey<Double> LATENCY_TIME_IN_MODEL_DECODE =
      doubleKey("gen_ai.latency.time_in_model_decode");

  /** Last token minus first scheduled. */
  public static final AttributeKey<Double> LATENCY_TIME_IN_MODEL_INFERENCE =
      doubleKey("gen_ai.latency.time_in_model_inference");

  // Shared llmlat names (LlmlatAttributes)
  public static final AttributeKey<String> STEP_KIND = stringKey(LlmlatAttributes.STEP_KIND);
  public static final AttributeKey<Long> STEP_BATCH_SIZE =
      longKey(LlmlatAttributes.STEP_BATCH_SIZE);
  public static final AttributeKey<Long> STEP_PREFILL_TOKENS =
      longKey(LlmlatAttributes.STEP_PREFILL_TOKENS);
  public static final AttributeKey<Long> STEP_DECODE_TOKENS =
      longKey(LlmlatAttributes.STEP_DECODE_TOKENS);
  public static final AttributeKey<String> STEP_SPAN_ID = stringKey(LlmlatAttributes.STEP_SPAN_ID);
  public static final AttributeKey<List<String>> TRACE_IDS =
      stringArrayKey(LlmlatAttributes.TRACE_IDS);
  public static final AttributeKey<String> NVTX_TEXT = stringKey(LlmlatAttributes.NVTX_TEXT);

  // Engine request names (LlmlatAttributes)
  public static final AttributeKey<Long> STEP_INDEX = longKey(LlmlatAttributes.STEP_INDEX);
  public static final AttributeKey<Long> REQUEST_PREEMPTIONS =
      longKey(LlmlatAttributes.REQUEST_PREEMPTIONS);
  public static final AttributeKey<Long> QUEUE_TOTAL_NS = longKey(LlmlatAttributes.QUEUE_TOTAL_NS);
  public static final AttributeKey<Boolean> QUEUE_REQUEUED =
      booleanKey(LlmlatAttributes.QUEUE_REQUEUED);
  public static final AttributeKey<Long> PREFILL_CHUNK_INDEX =
      longKey(LlmlatAttributes.PREFILL_CHUNK_INDEX);
  public static final AttributeKey<Long> PREFILL_START_TOKEN =
      longKey(LlmlatAttributes.PREFILL_START_TOKEN);
  public static final AttributeKey<Long> PREFILL_TOKENS = longKey(LlmlatAttributes.PREFILL_TOKENS);
  public static final AttributeKey<Boolean> PREFILL_RECOMPUTE =
      booleanKey(LlmlatAttributes.PREFILL_RECOMPUTE);
  public static final AttributeKey<Long> DECODE_TOKENS = longKey(LlmlatAttributes.DECODE_TOKENS);

  /** Delta-encoded token times (see {@link DecodeTokenTimes}). */
  public static final AttributeKey<List<Long>> DECODE_TOKEN_DELTAS_NS =
      longArrayKey(LlmlatAttributes.DECODE_TOKEN_DELTAS_NS);

  // Events on the request span
  public static final String EVENT_FIRST_TOKEN = LlmlatAttributes.EVENT_FIRST_TOKEN;
  public static final String EVENT_PREEMPTED = LlmlatAttributes.EVENT_PREEMPTED;
  public static final AttributeKey<String> PREEMPTION_REASON =
      stringKey(LlmlatAttributes.PREEMPTION_REASON);
  public static final AttributeKey<Long> PREEMPTION_GENERATED_TOKENS =
      longKey(LlmlatAttributes.PREEMPTION_GENERATED_TOKENS);
  public static final AttributeKey<String> ERROR_TYPE = stringKey("error.type");
}
