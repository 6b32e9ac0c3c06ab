package dev.llmlat.agent.gateway.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Reads the few top-level fields of an OpenAI-style JSON request body ({@code model},
 * {@code stream}, {@code max_tokens}/{@code max_completion_tokens}) from the bytes as the
 * application reads them. Incremental and constant-memory: it sees each byte once, keeps no body
 * text, and never captures the value of any other field (prompts and messages pass through
 * unseen). Not thread-safe; one per request.
 */
public final class OpenAiRequestScanner {

  /** Receives the fields as soon as they are complete. */
  public interface Listener {
    void onModel(String model);

    void onStream(boolean stream);

    void onMaxTokens(long maxTokens);
  }

  /** Keys and values longer than this are not fields we care about. */
  private static final int MAX_TOKEN = 256;
  /** Stop scanning huge bodies: the fields we want are almost always near the top or short. */
  private static final long MAX_SCANNED = 8L << 20;

  private final Listener listener;
  private final byte[] token = new byte[MAX_TOKEN];
  private int tokenLength;
  private boolean tokenOverflow;

  private int depth;
  private boolean inString;
  private boolean escaped;
  /** At depth 1: true while the next string is a key. */
  private boolean expectKey;
  /** The top-level key whose value comes next, or null when that value is not wanted. */
  private String wantedKey;
  private boolean capturingString;
  private boolean capturingScalar;
  private long scanned;
  private boolean done;
  private int found;

  public OpenAiRequestScanner(Listener listener) {
    this.listener = listener;
  }

  /** True once scanning stopped (all fields seen, malformed input, or too large). */
  public boolean isDone() {
    return done;
  }

  public void accept(byte[] bytes, int offset, int length) {
    for (int i = offset; i < offset + length && !done; i++) {
      step(bytes[i] & 0xff);
    }
    advance(length);
  }

  public void accept(ByteBuffer buffer) {
    for (int i = buffer.position(); i < buffer.limit() && !done; i++) {
      step(buffer.get(i) & 0xff);
    }
    advance(buffer.remaining());
  }

  private void advance(int length) {
    scanned += length;
    if (scanned > MAX_SCANNED) {
      done = true;
    }
  }

  private void step(int c) {
    if (inString) {
      if (escaped) {
        escaped = false;
        append(c);
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        inString = false;
        endString();
      } else {
        append(c);
      }
      return;
    }
    if (capturingScalar && (c == ',' || c == '}' || c == ']' || isSpace(c))) {
      endScalar();
    }
    switch (c) {
      case '"':
        inString = true;
        startToken();
        capturingString = depth == 1 && (expectKey || wantedKey != null);
        break;
      case '{':
      case '[':
        if (depth == 0 && c != '{') {
          done = true; // not a JSON object: nothing to find
        }
        depth++;
        if (depth == 1) {
          expectKey = true;
        } else if (depth == 2) {
          wantedKey = null; // a composite value (messages, tools, ...) is never captured
        }
        break;
      case '}':
      case ']':
        depth--;
        if (depth <= 0) {
          done = true;
        }
        break;
      case ':':
        break;
      case ',':
        if (depth == 1) {
          expectKey = true;
          wantedKey = null;
        }
        break;
      default:
        if (depth == 1 && !expectKey && wantedKey != null && !isSpace(c)) {
          if (!capturingScalar) {
            capturingScalar = true;
            startToken();
          }
          append(c);
        }
    }
  }

  private void endString() {
    if (!capturingString) {
      return;
    }
    capturingString = false;
    if (expectKey) {
      expectKey = false;
      wantedKey = tokenOverflow ? null : wanted(new String(token, 0, tokenLength, StandardCharsets.UTF_8));
    } else if (wantedKey != null && !tokenOverflow && wantedKey.equals("model")) {
      listener.onModel(new String(token, 0, tokenLength, StandardCharsets.UTF_8));
      found(wantedKey);
    }
  }

  private void endScalar() {
    capturingScalar = false;
    if (wantedKey == null || tokenOverflow) {
      return;
    }
    String value = new String(token, 0, tokenLength, StandardCharsets.US_ASCII);
    if (wantedKey.equals("stream")) {
      if (value.equals("true") || value.equals("false")) {
        listener.onStream(value.equals("true"));
        found(wantedKey);
      }
    } else if (!wantedKey.equals("model")) {
      try {
        listener.onMaxTokens(Long.parseLong(value));
        found(wantedKey);
      } catch (NumberFormatException e) {
        // null or a float: not a token limit
      }
    }
    wantedKey = null;
  }

  private void found(String key) {
    int bit = key.equals("model") ? 1 : key.equals("stream") ? 2 : 4;
    found |= bit;
    if (found == 7) {
      done = true;
    }
  }

  private static String wanted(String key) {
    switch (key) {
      case "model":
      case "stream":
      case "max_tokens":
      case "max_completion_tokens":
        return key;
      default:
        return null;
    }
  }

  private void startToken() {
    tokenLength = 0;
    tokenOverflow = false;
  }

  private void append(int c) {
    if (!(capturingString || capturingScalar)) {
      return;
    }
    if (tokenLength < MAX_TOKEN) {
      token[tokenLength++] = (byte) c;
    } else {
      tokenOverflow = true;
    }
  }

  private static boolean isSpace(int c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
  }
}
