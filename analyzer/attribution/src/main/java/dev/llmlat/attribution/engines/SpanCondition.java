package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A condition on one span, as data: {@link #test} checks a {@link SpanRecord}, {@link #sql} is the
 * same condition over {@code otel_traces}. Both come from the one declaration, so the store's
 * filter and the in-memory check cannot drift apart. Every text reaches SQL as an escaped literal.
 *
 * <p>Regular expressions are matched whole on both sides (Java {@code matches}, RE2 {@code
 * ^(?:..)$}): keep to the syntax both share (classes, {@code \d}, {@code \S}, groups, counted
 * repeats).
 */
public sealed interface SpanCondition {

  boolean test(SpanRecord span);

  String sql();

  SpanCondition ALWAYS = new All(List.of());
  SpanCondition NEVER = new Any(List.of());

  static SpanCondition name(String... names) {
    return new NameIn(Set.copyOf(new TreeSet<>(List.of(names))));
  }

  static SpanCondition nameMatches(String regex) {
    return new NameMatches(Pattern.compile(regex), new java.util.concurrent.ConcurrentHashMap<>());
  }

  static SpanCondition scope(String scope) {
    return new ScopeIs(scope);
  }

  static SpanCondition scopeStartsWith(String prefix) {
    return new ScopeStartsWith(prefix);
  }

  /** The resource's {@code llmlat.layer} ("" for none). */
  static SpanCondition layer(String layer) {
    return new LayerIs(layer);
  }

  static SpanCondition has(String attribute) {
    return new Has(attribute);
  }

  static SpanCondition attribute(String attribute, String value) {
    return new AttributeIs(attribute, value);
  }

  static SpanCondition attributeMatches(String attribute, String regex) {
    return new AttributeMatches(attribute, Pattern.compile(regex));
  }

  static SpanCondition allOf(SpanCondition... all) {
    List<SpanCondition> kept = Arrays.stream(all).filter(c -> !ALWAYS.equals(c)).toList();
    return kept.size() == 1 ? kept.get(0) : new All(kept);
  }

  static SpanCondition anyOf(SpanCondition... any) {
    return anyOf(List.of(any));
  }

  // NEVER and ALWAYS members dropped: the SQL stays readable where a rule has no engine mark
  static SpanCondition anyOf(List<SpanCondition> any) {
    List<SpanCondition> kept = any.stream().filter(c -> !NEVER.equals(c)).toList();
    return kept.size() == 1 ? kept.get(0) : new Any(kept);
  }

  static SpanCondition not(SpanCondition c) {
    return new Not(c);
  }

  /**
   * @param names a hashed set (every span is tested against it); the SQL lists them sorted
   */
  record NameIn(Set<String> names) implements SpanCondition {
    @Override
    public boolean test(SpanRecord span) {
      return names.contains(span.name());
    }

    @Override
    public String sql() {
      return names.size() == 1
          ? "SpanName = " + literal(names.iterator().next())
          : names.stream()
              .sorted()
              .map(SpanCondition::literal)
              .collect(Collectors.joining(", ", "SpanName IN (", ")"));
    }
  }

  /**
   * @param matched the answer for each name seen, up to {@link #REMEMBERED} names: span names are
   *     few and every span is tested, so most tests are a lookup instead of a match
   */
  record NameMatches(Pattern regex, java.util.Map<String, Boolean> matched)
      implements SpanCondition {
    static final int REMEMBERED = 4096;

    @Override
    public boolean test(SpanRecord span) {
      Boolean known = matched.get(span.name());
      if (known != null) {
        return known;
      }
      boolean m = regex.matcher(span.name()).matches();
      if (matched.size() < REMEMBERED) {
        matched.put(span.name(), m);
      }
      return m;
    }

    @Override
    public String sql() {
      return "match(SpanName, " + literal("^(?:" + regex.pattern() + ")$") + ")";
    }
  }

  record ScopeIs(String scope) implements SpanCondition {
    @Override
    public boolean test(SpanRecord span) {
      return scope.equals(span.scope());
    }

    @Override
    public String sql() {
      return "ScopeName = " + literal(scope);
    }
  }

  record ScopeStartsWith(String prefix) implements SpanCondition {
    @Override
    public boolean test(SpanRecord span) {
      return span.scope().startsWith(prefix);
    }

    @Override
    public String sql() {
      return "startsWith(ScopeName, " + literal(prefix) + ")";
    }
  }

  record LayerIs(String layer) implements SpanCondition {
    @Override
    public boolean test(SpanRecord span) {
      return layer.equals(span.layer());
    }

    @Override
    public String sql() {
      return "ResourceAttributes['llmlat.layer'] = " + literal(layer);
    }
  }

  record Has(String attribute) implements SpanCondition {
    @Override
    public boolean test(SpanRecord span) {
      return span.attributes().containsKey(attribute);
    }

    @Override
    public String sql() {
      return "mapContains(SpanAttributes, " + literal(attribute) + ")";
    }
  }

  /** The attribute's value is {@code value} (a missing attribute reads as "" on both sides). */
  record AttributeIs(String attribute, String value) implements SpanCondition {
    @Override
    public boolean test(SpanRecord span) {
      return value.equals(span.attr(attribute));
    }

    @Override
    public String sql() {
      return "SpanAttributes[" + literal(attribute) + "] = " + literal(value);
    }
  }

  record AttributeMatches(String attribute, Pattern regex) implements SpanCondition {
    @Override
    public boolean test(SpanRecord span) {
      return regex.matcher(span.attr(attribute)).matches();
    }

    @Override
    public String sql() {
      return "match(SpanAttributes["
          + literal(attribute)
          + "], "
          + literal("^(?:" + regex.pattern() + ")$")
          + ")";
    }
  }

  record All(List<SpanCondition> all) implements SpanCondition {
    @Override
    public boolean test(SpanRecord span) {
      for (SpanCondition c : all) {
        if (!c.test(span)) {
          return false;
        }
      }
      return true;
    }

    @Override
    public String sql() {
      return all.isEmpty()
          ? "1"
          : all.stream().map(c -> "(" + c.sql() + ")").collect(Collectors.joining(" AND "));
    }
  }

  record Any(List<SpanCondition> any) implements SpanCondition {
    @Override
    public boolean test(SpanRecord span) {
      for (SpanCondition c : any) {
        if (c.test(span)) {
          return true;
        }
      }
      return false;
    }

    @Override
    public String sql() {
      return any.isEmpty()
          ? "0"
          : any.stream().map(c -> "(" + c.sql() + ")").collect(Collectors.joining(" OR "));
    }
  }

  record Not(SpanCondition condition) implements SpanCondition {
    @Override
    public boolean test(SpanRecord span) {
      return !condition.test(span);
    }

    @Override
    public String sql() {
      return "NOT (" + condition.sql() + ")";
    }
  }

  /**
   * A ClickHouse string literal: backslashes and quotes escaped (the engine reads {@code \d} as
   * {@code d}).
   */
  private static String literal(String text) {
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }
}
