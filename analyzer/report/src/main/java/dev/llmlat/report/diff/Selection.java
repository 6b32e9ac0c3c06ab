package dev.llmlat.report.diff;

/**
 * Which attributed requests of a store make one side: those that arrived in [{@code fromNs}, {@code
 * toNs}), of {@code model} ("" for any), and, with {@code attribute}, whose spans carry a resource
 * or span attribute's value.
 */
public record Selection(
    String label, long fromNs, long toNs, String model, AttributeMatch attribute) {
  /** Every request of the store. */
  public static final long ALL_FROM = 0;

  public static final long ALL_TO = Long.MAX_VALUE / 2;

  /**
   * Requests with a span (any layer's) whose resource or span attribute {@code key} is {@code
   * value}, and none where it is {@code otherValue} (the other side's value: a request that carries
   * both, on different layers, belongs to neither side).
   */
  public record AttributeMatch(String key, String value, String otherValue) {
    public AttributeMatch {
      if (key == null || key.isBlank()) {
        throw new IllegalArgumentException(
            "name the attribute to compare by (e.g. --by service.version)");
      }
      if (value.equals(otherValue)) {
        throw new IllegalArgumentException(
            "the two sides' values of " + key + " are the same: '" + value + "'");
      }
    }

    /**
     * For the dimensions attribution itself decided ({@code instance}: the engine instance, {@code
     * tenant}: the tenant, {@code rank}: a late rank the request waited for), the condition on the
     * request's row with the value as the parameter {@code param}; null for a span attribute.
     */
    public String rowCondition(String param) {
      return switch (key) {
        case "instance" -> "EngineInstance = {" + param + ":String}";
        case "tenant" -> "Tenant = {" + param + ":String}";
        case "rank" -> "has(LateRank, {" + param + ":String})";
        default -> null;
      };
    }
  }

  public Selection {
    if (fromNs >= toNs) {
      throw new IllegalArgumentException(label + ": the window's start must come before its end");
    }
    model = model == null ? "" : model;
  }

  public static Selection all(String label, String model) {
    return new Selection(label, ALL_FROM, ALL_TO, model, null);
  }
}
