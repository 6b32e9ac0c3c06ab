package dev.llmlat.load;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Prompts from a dataset file, used in file order and from the start again when the run asks for
 * more. Two formats, told apart by the first character:
 *
 * <ul>
 *   <li>ShareGPT JSON (an array): each entry's {@code conversations} list of {@code {from, value}}
 *       turns gives the first human turn as the prompt and the length of the first gpt turn after
 *       it as the output tokens asked for (as vLLM's benchmark reads ShareGPT; entries without both
 *       turns are skipped, as there);
 *   <li>JSONL: one {@code {"prompt": "...", "output_tokens": N}} object per line; blank lines
 *       skipped.
 * </ul>
 *
 * Anything else is refused naming the file and the line, before a request is sent.
 */
public final class DatasetPrompts implements PromptSource {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path file;
  private final List<Prompt> prompts;
  private final int skipped;
  private int next;

  private DatasetPrompts(Path file, List<Prompt> prompts, int skipped) {
    this.file = file;
    this.prompts = List.copyOf(prompts);
    this.skipped = skipped;
  }

  /**
   * Reads {@code file}.
   *
   * @throws InvalidDatasetException naming the file, the line and what is wrong
   */
  public static DatasetPrompts read(Path file) {
    if (!Files.isRegularFile(file)) {
      throw new InvalidDatasetException(
          file + ": " + (Files.exists(file) ? "not a regular file" : "no such file"));
    }
    if (!Files.isReadable(file)) {
      throw new InvalidDatasetException(file + ": permission denied");
    }
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      int first = firstCharacter(in);
      if (first == '[') {
        return shareGpt(file);
      }
      if (first == '{') {
        return jsonLines(file);
      }
      throw new InvalidDatasetException(
          file
              + (first < 0
                  ? ": the file is empty"
                  : ": neither a ShareGPT JSON array nor JSONL objects (it starts with '"
                      + (char) first
                      + "')"));
    } catch (CharacterCodingException e) {
      throw new InvalidDatasetException(file + ": not UTF-8 text");
    } catch (IOException e) {
      throw new InvalidDatasetException(file + ": cannot be read: " + e.getMessage());
    }
  }

  private static int firstCharacter(Reader in) throws IOException {
    int c;
    do {
      c = in.read();
    } while (c == 0xFEFF || (c >= 0 && Character.isWhitespace(c)));
    return c;
  }

  private static DatasetPrompts shareGpt(Path file) throws IOException {
    List<Prompt> prompts = new ArrayList<>();
    int skipped = 0;
    int entry = 0;
    try (JsonParser p = JSON.createParser(Files.newBufferedReader(file, StandardCharsets.UTF_8))) {
      p.nextToken(); // the array
      while (p.nextToken() != JsonToken.END_ARRAY) {
        if (p.currentToken() == null) {
          throw new InvalidDatasetException(
              file + ": the JSON array is not closed (the file ends after " + entry + " entries)");
        }
        entry++;
        long line = p.currentTokenLocation().getLineNr();
        JsonNode node = p.readValueAsTree();
        Prompt prompt = shareGptEntry(node, file, line, entry);
        if (prompt == null) {
          skipped++;
        } else {
          prompts.add(prompt);
        }
      }
      if (p.nextToken() != null) {
        throw new InvalidDatasetException(
            file + ":" + p.currentTokenLocation().getLineNr() + ": text after the JSON array");
      }
    } catch (JsonProcessingException e) {
      throw new InvalidDatasetException(
          file + ":" + line(e.getLocation()) + ": not valid JSON: " + e.getOriginalMessage());
    }
    return checked(file, prompts, skipped);
  }

  /** One ShareGPT entry's prompt; null for an entry without a human and a gpt turn (skipped). */
  private static Prompt shareGptEntry(JsonNode node, Path file, long line, int entry) {
    String where = file + ":" + line + ": entry " + entry;
    if (!node.isObject()) {
      throw new InvalidDatasetException(where + " is not an object");
    }
    JsonNode turns = node.get("conversations");
    if (turns == null || !turns.isArray()) {
      throw new InvalidDatasetException(where + " has no \"conversations\" array");
    }
    String human = null;
    String gpt = null;
    for (JsonNode turn : turns) {
      JsonNode from = turn.get("from");
      JsonNode value = turn.get("value");
      if (from == null || !from.isTextual() || value == null || !value.isTextual()) {
        throw new InvalidDatasetException(
            where + ": every turn needs string \"from\" and \"value\"");
      }
      String role = from.asText().toLowerCase(Locale.ROOT);
      if (human == null && (role.equals("human") || role.equals("user"))) {
        human = value.asText();
      } else if (human != null && (role.equals("gpt") || role.equals("assistant"))) {
        gpt = value.asText();
        break;
      }
    }
    if (human == null || human.isEmpty() || gpt == null || gpt.isEmpty()) {
      return null;
    }
    return new Prompt(human, Prompt.estimateTokens(human), Prompt.estimateTokens(gpt));
  }

  private static DatasetPrompts jsonLines(Path file) throws IOException {
    List<Prompt> prompts = new ArrayList<>();
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String text;
      long line = 0;
      while ((text = in.readLine()) != null) {
        line++;
        if (text.isBlank()) {
          continue;
        }
        JsonNode node;
        try {
          node = JSON.readTree(text);
        } catch (JsonProcessingException e) {
          throw new InvalidDatasetException(
              file + ":" + line + ": not valid JSON: " + e.getOriginalMessage());
        }
        prompts.add(jsonLine(node, file + ":" + line));
      }
    }
    return checked(file, prompts, 0);
  }

  private static Prompt jsonLine(JsonNode node, String where) {
    if (!node.isObject()) {
      throw new InvalidDatasetException(
          where + ": expected an object {\"prompt\": ..., \"output_tokens\": N}");
    }
    JsonNode prompt = node.get("prompt");
    if (prompt == null || !prompt.isTextual() || prompt.asText().isEmpty()) {
      throw new InvalidDatasetException(where + ": \"prompt\" must be a non-empty string");
    }
    JsonNode output = node.get("output_tokens");
    if (output == null
        || !output.canConvertToInt()
        || !output.isIntegralNumber()
        || output.asInt() < 1) {
      throw new InvalidDatasetException(
          where + ": \"output_tokens\" must be a whole number of at least 1");
    }
    return new Prompt(prompt.asText(), Prompt.estimateTokens(prompt.asText()), output.asInt());
  }

  private static DatasetPrompts checked(Path file, List<Prompt> prompts, int skipped) {
    if (prompts.isEmpty()) {
      throw new InvalidDatasetException(
          file
              + ": no usable prompt"
              + (skipped > 0
                  ? " (" + skipped + " entries lack a human turn followed by a gpt turn)"
                  : ""));
    }
    return new DatasetPrompts(file, prompts, skipped);
  }

  private static long line(JsonLocation location) {
    return location == null ? 0 : location.getLineNr();
  }

  public int size() {
    return prompts.size();
  }

  /** Entries skipped for lacking a human turn followed by a gpt turn. */
  public int skipped() {
    return skipped;
  }

  @Override
  public Prompt next() {
    Prompt p = prompts.get(next);
    next = (next + 1) % prompts.size();
    return p;
  }

  @Override
  public String description() {
    return file.getFileName()
        + String.format(Locale.ROOT, ": %,d prompts", prompts.size())
        + (skipped > 0
            ? String.format(
                Locale.ROOT, " (%,d entries without a human and a gpt turn skipped)", skipped)
            : "");
  }
}
