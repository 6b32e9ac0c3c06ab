package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class CompletionTextTest {
  private static void stream(CompletionText text, String sse) {
    for (byte b : sse.getBytes(StandardCharsets.UTF_8)) {
      text.acceptEventStream(b);
    }
  }

  @Test
  void joinsStreamedDeltasAndSkipsEverythingElse() {
    CompletionText text = new CompletionText(100);
    stream(text, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n");
    assertThat(text.changed()).isFalse();
    stream(
        text,
        ": ping\r\nevent: x\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"
            + "data: {\"choices\":[{\"delta\":{\"content\":\"lo \\\"w\\\"\\n\\u00fc\"}}]}\n\ndata: [DONE]\n\n");
    assertThat(text.changed()).isTrue();
    assertThat(text.json())
        .isEqualTo(
            "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"Hello \\\"w\\\"\\nü\"}]}]");
    assertThat(text.changed()).as("reported once").isFalse();
  }

  @Test
  void readsAPlainBodyAndCutsAtTheBoundWithAMarker() {
    CompletionText text = new CompletionText(5);
    for (byte b : "{\"choices\":[{\"text\":\"abcdefghij\"}]}".getBytes(StandardCharsets.UTF_8)) {
      text.acceptBody(b);
    }
    text.finishBody();
    text.finishBody(); // re-reading the same body does not double it
    assertThat(text.json()).contains("\"content\":\"abcde...[truncated: 10 chars]\"");
  }
}
