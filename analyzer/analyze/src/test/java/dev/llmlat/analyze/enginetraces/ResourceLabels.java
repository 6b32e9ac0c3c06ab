package dev.llmlat.analyze.enginetraces;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * An engine's OTLP/JSON with one more resource attribute on every resource: what a deployment adds
 * through {@code OTEL_RESOURCE_ATTRIBUTES} (e.g. {@code llmlat.layer=engine}) without changing the
 * engine's spans.
 */
public final class ResourceLabels {
  private static final ObjectMapper JSON = new ObjectMapper();

  private ResourceLabels() {}

  public static List<String> add(List<String> documents, String key, String value) {
    List<String> out = new ArrayList<>(documents.size());
    try {
      for (String doc : documents) {
        JsonNode root = JSON.readTree(doc);
        for (JsonNode rs : root.get("resourceSpans")) {
          ObjectNode kv = ((ArrayNode) rs.get("resource").get("attributes")).addObject();
          kv.put("key", key);
          kv.putObject("value").put("stringValue", value);
        }
        out.add(JSON.writeValueAsString(root));
      }
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }
}
