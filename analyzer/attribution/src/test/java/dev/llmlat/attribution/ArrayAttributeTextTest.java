package dev.llmlat.attribution;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The core's array reader against a full JSON reader, on the arrays stores hold and on broken text.
 */
class ArrayAttributeTextTest {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  @ParameterizedTest
  @ValueSource(
      strings = {
        "[\"4bf92f3577b34da6a3ce929d0e0e4736\",\"00f067aa0ba902b7a3ce929d0e0e4736\"]",
        "[1200000,350000, 980000 ]",
        "[]",
        " [ ] ",
        "[\"a\\\"b\",\"c\\\\d\",\"\\u00e9\\n\\t/\\/\"]",
        "[true,false,null,2.5,-2]",
        "[[1,2],{\"k\":\"]\"},\"x\"]",
        "[\"unterminated]",
        "[1,2",
        "{\"not\":\"an array\"}",
        "not json",
        "[1,]",
        "[1] trailing"
      })
  void readsWhatAJsonReaderReads(String text) throws Exception {
    assertThat(ArrayAttributeText.parse(text)).as(text).isEqualTo(jackson(text));
  }

  private static List<String> jackson(String text) {
    List<String> out = new ArrayList<>();
    try {
      JsonNode node = JSON.readTree(text);
      if (node != null && node.isArray()) {
        node.forEach(n -> out.add(n.isContainerNode() ? "" : n.asText()));
      }
    } catch (Exception e) {
      return List.of();
    }
    return out;
  }
}
