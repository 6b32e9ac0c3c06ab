package dev.llmlat.metrics;

import dev.llmlat.attribution.QueueBreakdown;
import dev.llmlat.semconv.LlmlatMetrics;
import dev.llmlat.semconv.TtftComponent;
import io.opentelemetry.sdk.metrics.Aggregation;
import io.opentelemetry.sdk.metrics.InstrumentSelector;
import io.opentelemetry.sdk.metrics.SdkMeterProviderBuilder;
import io.opentelemetry.sdk.metrics.View;

/**
 * The SDK views of the attribution instruments: exponential (base-2) buckets for the histograms,
 * whose resolution follows the values instead of boundaries fixed in advance, and a cardinality
 * limit on every instrument. The limit counts attribute sets of service, model, engine instance and
 * tenant: an instrument with one more attribute of {@code k} values (the component, the queue
 * cause, the objective) keeps {@code k} times as many series.
 */
public final class AttributionViews {
  private AttributionViews() {}

  /**
   * Registers the views on {@code builder} with {@code maxSeries} attribute sets per instrument.
   */
  public static SdkMeterProviderBuilder register(SdkMeterProviderBuilder builder, int maxSeries) {
    histogram(builder, LlmlatMetrics.TTFT, maxSeries);
    histogram(builder, LlmlatMetrics.TTFT_COMPONENT, maxSeries * TtftComponent.all().size());
    histogram(builder, LlmlatMetrics.ITL, maxSeries);
    counter(builder, LlmlatMetrics.SLO_VIOLATIONS, maxSeries * 2);
    counter(builder, LlmlatMetrics.QUEUE_TIME, maxSeries * QueueBreakdown.KINDS.size());
    return builder;
  }

  private static void histogram(SdkMeterProviderBuilder builder, String name, int limit) {
    builder.registerView(
        InstrumentSelector.builder().setName(name).build(),
        View.builder()
            .setAggregation(Aggregation.base2ExponentialBucketHistogram())
            .setCardinalityLimit(limit)
            .build());
  }

  private static void counter(SdkMeterProviderBuilder builder, String name, int limit) {
    builder.registerView(
        InstrumentSelector.builder().setName(name).build(),
        View.builder().setCardinalityLimit(limit).build());
  }
}
