package dev.llmlat.agent.gateway.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The completion text of an OpenAI-style response, for opted-in content capture only ({@link
 * ContentCapture}): the string values of {@code content} (chat, streamed deltas or the whole
 * message) and {@code text} (completions) keys, from the data lines of an event stream or from a
 * plain JSON body. Keeps at most the capture limit; memory stays bounded for any response. Not
 * thread-safe; one per request.
 */
public final class CompletionText {
  /**
   * A data line or plain body longer than this is not read for text (a completion chunk never is).
   */
  private static final int MAX_BUFFER = 1 << 20;

  private final int maxChars;
  private final StringBuilder text = new StringBuilder();
  private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
  private boolean overflow;
  private long totalChars;
  private boolean changed;

  public CompletionText(int maxChars) {
    this.maxChars = maxChars;
  }

  /** Bytes of a {@code text/event-stream} body: each complete {@code data:} line is read. */
  public void acceptEventStream(byte b) {
    if (b == '\n') {
      if (!overflow) {
        String line = new String(buffer.toByteArray(), StandardCharsets.UTF_8);
        if (line.startsWith("data:")) {
          extract(line.substring(5));
        }
      }
      buffer.reset();
      overflow = false;
    } else if (b != '\r') {
      append(b);
    }
  }

  /** Bytes of a plain (not streamed) body; read at {@link #finishBody()}. */
  public void acceptBody(byte b) {
    append(b);
  }

  /** Re-reads the plain body seen so far (called whenever bytes are handed to the network). */
  public void finishBody() {
    if (overflow || buffer.size() == 0) {
      return;
    }
    text.setLength(0);
    totalChars = 0;
    extract(new String(buffer.toByteArray(), StandardCharsets.UTF_8));
  }

  private void append(byte b) {
    if (buffer.size() < MAX_BUFFER) {
      buffer.write(b);
    } else {
      overflow = true;
    }
  }

  /** True (once) when the text grew since the last call. */
  public boolean changed() {
    boolean c = changed;
    changed = false;
    return c;
  }

  /** The text as {@code gen_ai.output.messages} JSON (one assistant message with one text part). */
  public String json() {
    return "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":"
        + quote(ContentCapture.bounded(text.toString(), totalChars, maxChars))
        + "}]}]";
  }

  /** Appends the string values of "content" and "text" keys found in one JSON document. */
  void extract(String json) {
    String key = null;
    boolean afterColon = false;
    int i = 0;
    while (i < json.length()) {
      char c = json.charAt(i);
      if (c == '"') {
        StringBuilder s = new StringBuilder();
        i = readString(json, i + 1, s);
        if (afterColon && ("content".equals(key) || "text".equals(key))) {
          add(s);
          afterColon = false;
          key = null;
          continue;
        }
        int j = i;
        while (j < json.length() && Character.isWhitespace(json.charAt(j))) {
          j++;
        }
        if (j < json.length() && json.charAt(j) == ':') {
          key = s.toString();
          afterColon = true;
          i = j + 1;
        } else {
          afterColon = false;
        }
        continue;
      }
      if (!Character.isWhitespace(c)) {
        afterColon = false;
      }
      i++;
    }
  }

  private void add(CharSequence s) {
    if (s.length() == 0) {
      return;
    }
    totalChars += s.length();
    int room = maxChars - text.length();
    if (room > 0) {
      text.append(s, 0, Math.min(room, s.length()));
    }
    changed = true;
  }

  /**
   * Decodes a JSON string starting after its opening quote; returns the index after its closing
   * quote.
   */
  private static int readString(String json, int i, StringBuilder out) {
    while (i < json.length()) {
      char c = json.charAt(i++);
      if (c == '"') {
        return i;
      }
      if (c != '\\' || i >= json.length()) {
        out.append(c);
        continue;
      }
      char e = json.charAt(i++);
      switch (e) {
        case 'n':
          out.append('\n');
          break;
        case 't':
          out.append('\t');
          break;
        case 'r':
          out.append('\r');
          break;
        case 'b':
          out.append('\b');
          break;
        case 'f':
          out.append('\f');
          break;
        case 'u':
          if (i + 4 <= json.length()) {
            try {
              out.append((char) Integer.parseInt(json.substring(i, i + 4), 16));
            } catch (NumberFormatException bad) {
              out.append('?');
            }
            i += 4;
          }
          break;
        default:
          out.append(e); // \" \\ \/
      }
    }
    return i;
  }

  /** {@code s} as a JSON string literal. */
  static String quote(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c == '\n') {
        out.append("\\n");
      } else if (c < 0x20) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append('"').toString();
  }
}
