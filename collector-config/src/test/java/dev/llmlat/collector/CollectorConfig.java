package dev.llmlat.collector;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * One Collector configuration file, parsed as the Collector's YAML loader sees it (before env
 * expansion).
 */
record CollectorConfig(String file, Map<String, Object> root) {
  static CollectorConfig load(Path path) {
    // SafeConstructor: plain maps, lists and scalars, as confmap reads them.
    Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
    try (InputStream in = Files.newInputStream(path)) {
      Object doc = yaml.load(in);
      if (!(doc instanceof Map<?, ?>)) {
        throw new IllegalArgumentException(path + " is not a YAML mapping");
      }
      return new CollectorConfig(path.getFileName().toString(), cast(doc));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The components of one kind ({@code receivers}, ...), by id ({@code type} or {@code type/name}).
   */
  Map<String, Map<String, Object>> components(String kind) {
    Map<String, Map<String, Object>> result = new LinkedHashMap<>();
    Object section = root.get(kind);
    if (section instanceof Map<?, ?> m) {
      m.forEach((id, cfg) -> result.put((String) id, cfg == null ? Map.of() : cast(cfg)));
    }
    return result;
  }

  /** The component of {@code kind} with {@code id}; fails if absent. */
  Map<String, Object> component(String kind, String id) {
    Map<String, Object> c = components(kind).get(id);
    if (c == null) {
      throw new AssertionError(file + " has no " + kind + " " + id);
    }
    return c;
  }

  /** {@code service.pipelines}: pipeline id → kind → component ids. */
  Map<String, Map<String, List<String>>> pipelines() {
    Map<String, Object> pipelines = cast(cast(root.get("service")).get("pipelines"));
    Map<String, Map<String, List<String>>> result = new LinkedHashMap<>();
    pipelines.forEach(
        (id, p) -> {
          Map<String, List<String>> kinds = new LinkedHashMap<>();
          cast(p).forEach((kind, ids) -> kinds.put(kind, strings(ids)));
          result.put(id, kinds);
        });
    return result;
  }

  /** The component type of an id: {@code kafka/spans} → {@code kafka}. */
  static String type(String id) {
    int slash = id.indexOf('/');
    return slash < 0 ? id : id.substring(0, slash);
  }

  /**
   * Every key path under {@code config}: nested maps joined with dots, lists of maps as {@code
   * key[]}.
   */
  static List<String> keyPaths(Map<String, Object> config) {
    List<String> paths = new ArrayList<>();
    collect("", config, paths);
    return paths;
  }

  private static void collect(String prefix, Map<String, Object> map, List<String> out) {
    map.forEach(
        (key, value) -> {
          String path = prefix + key;
          if (value instanceof Map<?, ?> nested && !nested.isEmpty()) {
            collect(path + ".", cast(nested), out);
          } else if (value instanceof List<?> list
              && !list.isEmpty()
              && list.get(0) instanceof Map<?, ?>) {
            for (Object element : list) {
              collect(path + "[].", cast(element), out);
            }
          } else {
            out.add(path);
          }
        });
  }

  /** The value at a dotted path, or null. */
  static Object at(Map<String, Object> config, String path) {
    Object current = config;
    for (String part : path.split("\\.")) {
      if (!(current instanceof Map<?, ?> m)) {
        return null;
      }
      current = m.get(part);
    }
    return current;
  }

  static List<String> strings(Object value) {
    List<String> result = new ArrayList<>();
    if (value instanceof List<?> list) {
      list.forEach(v -> result.add(String.valueOf(v)));
    }
    return result;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> cast(Object o) {
    return (Map<String, Object>) o;
  }
}
