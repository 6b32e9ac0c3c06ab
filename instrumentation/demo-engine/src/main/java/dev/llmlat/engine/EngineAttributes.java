package dev.llmlat.engine;

import static io.opentelemetry.api.common.AttributeKey.doubleKey;
import static io.opentelemetry.api.common.AttributeKey.longKey;
import static io.opentelemetry.api.common.AttributeKey.stringKey;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.api.common.AttributeKey;

/** Attributes the demo engine adds to step spans; the {@code llmlat.engine.*} names are new. */
public final class EngineAttributes {
  private EngineAttributes() {}

  /** The cost model's step duration, before time scaling. */
  public static final AttributeKey<Long> MODELLED_STEP_NS =
      longKey("llmlat.engine.modelled_step_ns");

  /** Wall time per modelled time the engine ran with. */
  public static final AttributeKey<Double> TIME_SCALE = doubleKey("llmlat.engine.time_scale");

  public static final AttributeKey<Long> GPU_BUSY_NS = longKey(LlmlatAttributes.GPU_BUSY_NS);
  public static final AttributeKey<Long> GPU_FIRST_KERNEL_START =
      longKey(LlmlatAttributes.GPU_FIRST_KERNEL_START);
  public static final AttributeKey<Long> GPU_LAST_KERNEL_END =
      longKey(LlmlatAttributes.GPU_LAST_KERNEL_END);
  public static final AttributeKey<String> GPU_SOURCE = stringKey(LlmlatAttributes.GPU_SOURCE);
  public static final AttributeKey<String> CLOCK_RULE = stringKey(LlmlatAttributes.CLOCK_RULE);
  public static final String SOURCE_ENGINE = "engine";

  /** GPU step spans of the demo engine span the modelled step on the engine's own clock. */
  public static final String CLOCK_RULE_ENGINE = "engine:host-clock,modelled-step";
}
