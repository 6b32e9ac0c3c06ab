package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class OpenAiRequestScannerTest {

  /** Records what the scanner reports. */
  static final class Seen implements OpenAiRequestScanner.Listener {
    final List<String> events = new ArrayList<>();

    @Override
    public void onModel(String model) {
      events.add("model=" + model);
    }

    @Override
    public void onStream(boolean stream) {
      events.add("stream=" + stream);
    }

    @Override
    public void onMaxTokens(long maxTokens) {
      events.add("max_tokens=" + maxTokens);
    }

    @Override
    public void onInputMessages(String json, long totalChars) {
      events.add("input(" + totalChars + ")=" + json);
    }

    @Override
    public void onUser(String user) {
      events.add("user=" + user);
    }
  }

  @Test
  void capturesTheRawMessagesOnlyWhenAskedAndAtAnySplit() {
    String messages = "[{\"role\":\"user\",\"content\":\"q \\\"x\\\" ] } ü\"}]";
    String body =
        "{\"model\":\"m\",\"messages\":" + messages + ",\"stream\":true,\"max_tokens\":5}";
    for (int piece : new int[] {1, 3, 1000}) {
      Seen seen = new Seen();
      OpenAiRequestScanner scanner = new OpenAiRequestScanner(seen, 1000, false);
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      for (int i = 0; i < bytes.length; i += piece) {
        scanner.accept(bytes, i, Math.min(piece, bytes.length - i));
      }
      assertThat(seen.events)
          .as("split every %d bytes", piece)
          .containsExactly(
              "model=m",
              "input(" + messages.length() + ")=" + messages,
              "stream=true",
              "max_tokens=5");
    }
    // off (the default): the same body yields no input at all
    assertThat(scanInPieces(body, 1)).noneMatch(e -> e.startsWith("input"));
  }

  @Test
  void capturesACompletionPromptCutAtTheBound() {
    Seen seen = new Seen();
    String prompt = "\"" + "p".repeat(50) + "\"";
    new OpenAiRequestScanner(seen, 10, false)
        .accept(
            ByteBuffer.wrap(
                ("{\"prompt\": " + prompt + " ,\"model\":\"m\"}")
                    .getBytes(StandardCharsets.UTF_8)));
    assertThat(seen.events).containsExactly("input(52)=" + prompt.substring(0, 40), "model=m");
  }

  private static List<String> scanInPieces(String json, int piece) {
    return scanInPieces(json, piece, false);
  }

  private static List<String> scanInPieces(String json, int piece, boolean user) {
    Seen seen = new Seen();
    OpenAiRequestScanner scanner = new OpenAiRequestScanner(seen, 0, user);
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < bytes.length; i += piece) {
      scanner.accept(bytes, i, Math.min(piece, bytes.length - i));
    }
    return seen.events;
  }

  @Test
  void readsTopLevelFieldsAtAnySplitAndIgnoresNestedOnes() {
    String body =
        "{\"messages\":[{\"role\":\"user\",\"content\":\"say \\\"model\\\": {x}\","
            + "\"model\":\"nested-not-this\",\"max_tokens\":1}],"
            + "\"model\" : \"tinylm-1b\", \"stream\": true,\n \"max_tokens\": 64, \"temperature\": 0.7}";
    for (int piece : new int[] {1, 2, 3, 7, 1000}) {
      assertThat(scanInPieces(body, piece))
          .as("split every %d bytes", piece)
          .containsExactly("model=tinylm-1b", "stream=true", "max_tokens=64");
    }
  }

  @Test
  void acceptsMaxCompletionTokensAndFalseStreamAndByteBuffers() {
    Seen seen = new Seen();
    OpenAiRequestScanner scanner = new OpenAiRequestScanner(seen);
    scanner.accept(
        ByteBuffer.wrap(
            "{\"stream\":false,\"max_completion_tokens\":12,\"prompt\":\"hi\",\"model\":\"m\"}"
                .getBytes(StandardCharsets.UTF_8)));
    assertThat(seen.events).containsExactly("stream=false", "max_tokens=12", "model=m");
    assertThat(scanner.isDone()).isTrue();
  }

  @Test
  void neverReportsPromptTextEvenUnderWantedLookingValues() {
    String body =
        "{\"prompt\":\"model stream max_tokens\",\"stream\":\"yes\",\"max_tokens\":null,"
            + "\"model\":{\"name\":\"x\"}}";
    assertThat(scanInPieces(body, 5)).isEmpty();
  }

  @Test
  void stopsOnNonObjectBodies() {
    Seen seen = new Seen();
    OpenAiRequestScanner scanner = new OpenAiRequestScanner(seen);
    byte[] bytes = "[{\"model\":\"x\"}]".getBytes(StandardCharsets.UTF_8);
    scanner.accept(bytes, 0, bytes.length);
    assertThat(seen.events).isEmpty();
    assertThat(scanner.isDone()).isTrue();
  }

  @Test
  void readsTheTopLevelUserOnlyWhenAskedEvenAfterTheOtherFields() {
    String body =
        "{\"messages\":[{\"role\":\"user\",\"user\":\"nested-not-this\"}],\"model\":\"m\","
            + "\"stream\":true,\"max_tokens\":5, \"user\" : \"team-\\\"a\\\"\"}";
    for (int piece : new int[] {1, 3, 1000}) {
      assertThat(scanInPieces(body, piece, true))
          .as("split every %d bytes", piece)
          .containsExactly("model=m", "stream=true", "max_tokens=5", "user=team-\"a\"");
    }
    assertThat(scanInPieces(body, 1, false))
        .containsExactly("model=m", "stream=true", "max_tokens=5");
  }

  @Test
  void aUserThatIsNotAShortStringIsNotReported() {
    assertThat(scanInPieces("{\"user\":42,\"model\":\"m\"}", 1, true)).containsExactly("model=m");
    assertThat(scanInPieces("{\"user\":null,\"max_tokens\":3}", 2, true))
        .containsExactly("max_tokens=3");
    assertThat(scanInPieces("{\"user\":{\"id\":\"u\"},\"model\":\"m\"}", 1, true))
        .containsExactly("model=m");
    // longer than the scanner's 256-byte token bound
    assertThat(scanInPieces("{\"user\":\"" + "u".repeat(300) + "\",\"model\":\"m\"}", 7, true))
        .containsExactly("model=m");
  }
}
