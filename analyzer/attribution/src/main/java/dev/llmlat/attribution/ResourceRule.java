package dev.llmlat.attribution;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Which resource attribute names a span's host, or its process instance: the first non-empty one of
 * a list, as data, so that {@code TraceReader}'s SQL and {@link
 * dev.llmlat.analyze.otlp.OtlpSpanRecords} (live attribution) pick the same one.
 *
 * @param keys in order of preference
 */
public record ResourceRule(List<Key> keys) {

  /** One resource attribute, and the prefix its value gets as a name ({@code pid 123}). */
  public record Key(String attribute, String prefix) {}

  /** {@code host.name}, else {@code host.id}. */
  public static final ResourceRule HOST =
      new ResourceRule(List.of(new Key(LlmlatAttributes.HOST_NAME, ""), new Key("host.id", "")));

  /**
   * {@code service.instance.id}, else host, else pod, else {@code pid N} (OTel's process.pid, then
   * vLLM's).
   */
  public static final ResourceRule INSTANCE =
      new ResourceRule(
          List.of(
              new Key("service.instance.id", ""),
              new Key(LlmlatAttributes.HOST_NAME, ""),
              new Key("k8s.pod.name", ""),
              new Key("process.pid", "pid "),
              new Key("vllm.process_id", "pid ")));

  public ResourceRule {
    keys = List.copyOf(keys);
  }

  /** The name from a resource's attributes ("" when none of the keys has a value). */
  public String of(Map<String, String> resource) {
    for (Key k : keys) {
      String v = resource.getOrDefault(k.attribute(), "");
      if (!v.isEmpty()) {
        return k.prefix() + v;
      }
    }
    return "";
  }

  /** The same over {@code otel_traces}' ResourceAttributes (names are constants, never input). */
  public String sql() {
    return keys.stream()
        .map(
            k -> {
              String value = "ResourceAttributes['" + k.attribute() + "']";
              return value
                  + " != '', "
                  + (k.prefix().isEmpty() ? value : "concat('" + k.prefix() + "', " + value + ")");
            })
        .collect(Collectors.joining(", ", "multiIf(", ", '')"));
  }
}
