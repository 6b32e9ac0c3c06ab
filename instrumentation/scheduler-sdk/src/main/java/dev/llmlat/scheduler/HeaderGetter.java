package dev.llmlat.scheduler;

import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.Map;

/** Reads propagation headers from a plain map, ignoring case as HTTP does. */
final class HeaderGetter implements TextMapGetter<Map<String, String>> {
  static final HeaderGetter INSTANCE = new HeaderGetter();

  @Override
  public Iterable<String> keys(Map<String, String> carrier) {
    return carrier.keySet();
  }

  @Override
  public String get(Map<String, String> carrier, String key) {
    if (carrier == null) {
      return null;
    }
    String value = carrier.get(key);
    if (value != null) {
      return value;
    }
    for (Map.Entry<String, String> e : carrier.entrySet()) {
      if (e.getKey() != null && e.getKey().equalsIgnoreCase(key)) {
        return e.getValue();
      }
    }
    return null;
  }
}
