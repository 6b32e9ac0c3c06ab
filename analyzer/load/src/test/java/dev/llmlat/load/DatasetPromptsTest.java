package dev.llmlat.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DatasetPromptsTest {
  @TempDir Path dir;

  private Path file(String name, String text) throws Exception {
    return Files.writeString(dir.resolve(name), text);
  }

  @Test
  void shareGptTakesTheFirstHumanTurnAndTheLengthOfTheGptAnswer() throws Exception {
    Path f =
        file(
            "sharegpt.json",
            """
        [
          {"id": "a", "conversations": [
            {"from": "system", "value": "be brief"},
            {"from": "human", "value": "What is a KV cache?"},
            {"from": "gpt", "value": "It keeps the attention keys and values of earlier tokens."},
            {"from": "human", "value": "And paging?"}]},
          {"id": "only-human", "conversations": [{"from": "human", "value": "hello?"}]},
          {"id": "b", "conversations": [{"from": "human", "value": "Say hi"}, {"from": "gpt", "value": "Hi"}]}
        ]
        """);
    DatasetPrompts d = DatasetPrompts.read(f);
    assertThat(d.size()).isEqualTo(2);
    assertThat(d.skipped()).isEqualTo(1);
    Prompt first = d.next();
    assertThat(first.text()).isEqualTo("What is a KV cache?");
    // 57 characters of answer: a quarter of them, rounded up
    assertThat(first.outputTokens()).isEqualTo(15);
    assertThat(first.inputTokens()).isEqualTo(5);
    assertThat(d.next().text()).isEqualTo("Say hi");
    assertThat(d.next().text()).isEqualTo("What is a KV cache?"); // from the start again
    assertThat(d.description())
        .contains("2 prompts")
        .contains("1 entries without a human and a gpt turn skipped");
  }

  @Test
  void jsonLinesGiveThePromptAndTheOutputTokens() throws Exception {
    Path f =
        file(
            "prompts.jsonl",
            "{\"prompt\": \"one two\", \"output_tokens\": 7}\n\n{\"prompt\": \"three\", \"output_tokens\": 1}\n");
    DatasetPrompts d = DatasetPrompts.read(f);
    assertThat(d.size()).isEqualTo(2);
    Prompt p = d.next();
    assertThat(p.text()).isEqualTo("one two");
    assertThat(p.outputTokens()).isEqualTo(7);
  }

  @Test
  void malformedLinesAreNamedByFileAndLine() throws Exception {
    Path badJson =
        file(
            "a.jsonl",
            "{\"prompt\": \"x\", \"output_tokens\": 3}\n\n{\"prompt\": \"y\", \"output_tokens\": \n");
    assertThatThrownBy(() -> DatasetPrompts.read(badJson))
        .isInstanceOf(InvalidDatasetException.class)
        .hasMessageStartingWith(badJson + ":3: not valid JSON");
    Path noTokens =
        file("b.jsonl", "{\"prompt\": \"x\", \"output_tokens\": 3}\n{\"prompt\": \"y\"}\n");
    assertThatThrownBy(() -> DatasetPrompts.read(noTokens))
        .hasMessage(noTokens + ":2: \"output_tokens\" must be a whole number of at least 1");
    Path fraction = file("c.jsonl", "{\"prompt\": \"x\", \"output_tokens\": 2.5}\n");
    assertThatThrownBy(() -> DatasetPrompts.read(fraction)).hasMessageContaining(fraction + ":1:");
    Path noPrompt = file("d.jsonl", "{\"prompt\": \"\", \"output_tokens\": 2}\n");
    assertThatThrownBy(() -> DatasetPrompts.read(noPrompt))
        .hasMessage(noPrompt + ":1: \"prompt\" must be a non-empty string");
    Path turns =
        file(
            "e.json",
            "[\n {\"conversations\": [{\"from\": \"human\", \"value\": \"q\"}, {\"from\": \"gpt\", \"value\": \"a\"}]},\n"
                + " {\"conversations\": [{\"from\": \"human\"}]}\n]");
    assertThatThrownBy(() -> DatasetPrompts.read(turns))
        .hasMessage(turns + ":3: entry 2: every turn needs string \"from\" and \"value\"");
    Path unclosed = file("f.json", "[\n {\"conversations\": []},\n {\"conversations\": [");
    assertThatThrownBy(() -> DatasetPrompts.read(unclosed))
        .hasMessageStartingWith(unclosed + ":3: not valid JSON");
    Path neither = file("g.txt", "prompt,tokens\n");
    assertThatThrownBy(() -> DatasetPrompts.read(neither))
        .hasMessageContaining("neither a ShareGPT JSON array nor JSONL");
    Path empty = file("h.jsonl", "\n\n");
    assertThatThrownBy(() -> DatasetPrompts.read(empty)).hasMessage(empty + ": the file is empty");
    Path none = file("i.json", "[{\"conversations\": [{\"from\": \"gpt\", \"value\": \"a\"}]}]");
    assertThatThrownBy(() -> DatasetPrompts.read(none))
        .hasMessageContaining("no usable prompt (1 entries lack");
    assertThatThrownBy(() -> DatasetPrompts.read(dir.resolve("missing.json")))
        .hasMessage(dir.resolve("missing.json") + ": no such file");
  }

  @Test
  void syntheticPromptsAreSeededAndHaveTheirLengthInWords() {
    SyntheticPrompts a =
        new SyntheticPrompts(
            new SyntheticPrompts.Length(100, 10), new SyntheticPrompts.Length(20, 0), 42);
    SyntheticPrompts b =
        new SyntheticPrompts(
            new SyntheticPrompts.Length(100, 10), new SyntheticPrompts.Length(20, 0), 42);
    for (int i = 0; i < 50; i++) {
      Prompt p = a.next();
      assertThat(p).isEqualTo(b.next());
      assertThat(p.text().split(" ")).hasSize(p.inputTokens());
      assertThat(p.outputTokens()).isEqualTo(20);
    }
  }
}
