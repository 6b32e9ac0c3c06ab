package dev.llmlat.attribution.engines;

import java.util.Set;

/**
 * What makes a span one engine convention's request, declared once as data: the store's filter
 * ({@link EngineAdapters#requestWhere}) and the in-memory check ({@link EngineAdapters#forRequest})
 * are both generated from it.
 *
 * @param names the request span's names: a cheap first filter (SpanName is a LowCardinality column)
 * @param required what else a request span of this convention carries
 * @param engine what names this engine on any span (its scope, span names only it uses): a span
 *     that names one engine is read by that engine's adapter alone, whatever its layer says
 * @param sharedSpanNames names of spans outside a request's own trace that its attribution needs
 *     (engine steps, batch spans in traces of their own)
 */
public record RequestRule(
    SpanCondition names,
    SpanCondition required,
    SpanCondition engine,
    Set<String> sharedSpanNames) {

  public RequestRule {
    sharedSpanNames = Set.copyOf(sharedSpanNames);
  }

  /** The convention's request span, before other engines' claims are taken into account. */
  public SpanCondition request() {
    return SpanCondition.allOf(names, required);
  }
}
