package dev.llmlat.agent.gateway.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads the few top-level fields of an OpenAI-style JSON request body ({@code model}, {@code
 * stream}, {@code max_tokens}/{@code max_completion_tokens}, and {@code user} when it names the
 * tenant ({@link TenantConfig})) from the bytes as the application reads them. Incremental and
 * constant-memory: it sees each byte once, keeps no body text, and never captures the value of any
 * other field: prompts and messages pass through unseen unless the user opted in to content capture
 * ({@link ContentCapture}), in which case the raw JSON of {@code messages} (chat) or {@code prompt}
 * (completions) is kept up to a bound. Not thread-safe; one per request.
 */
public final class OpenAiRequestScanner {

  /** Receives the fields as soon as they are complete. */
  public interface Listener {
    void onModel(String model);

    void onStream(boolean stream);

    void onMaxTokens(long maxTokens);

    /** The top-level {@code user} string; only when the scanner was asked for it. */
    default void onUser(String user) {}

    /**
     * The raw JSON value of {@code messages} or {@code prompt}, cut at the capture bound ({@code
     * totalChars} tells how long it was); only with content capture on.
     */
    default void onInputMessages(String json, long totalChars) {}
  }

  private static final String[] WANTED = {"model", "stream", "max_tokens", "max_completion_tokens"};
  private static final byte[][] WANTED_BYTES = {
    ascii(WANTED[0]), ascii(WANTED[1]), ascii(WANTED[2]), ascii(WANTED[3])
  };
  private static final String USER = "user";
  private static final byte[] USER_BYTES = ascii(USER);

  /** {@link #found} bits: model, stream, a token limit, user. */
  private static final int FIELDS = 7;

  private static final int USER_FOUND = 8;
  private static final byte[] MESSAGES = ascii("messages");
  private static final byte[] PROMPT = ascii("prompt");

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

  /** The {@link #found} bits that end the scan (with the input, when captured). */
  private final int allFound;

  /** Content capture: the most characters of the input kept, 0 when off. */
  private final int captureChars;

  /** The top-level key just read names the input (messages/prompt): its value is captured. */
  private boolean captureNext;

  /** Capturing now; the value is a string ('"'), a composite ('[' '{') or a scalar (other). */
  private int captureKind;

  private java.io.ByteArrayOutputStream captured;
  private long capturedTotal;
  private boolean inputSeen;

  public OpenAiRequestScanner(Listener listener) {
    this(listener, 0, false);
  }

  /**
   * With {@code captureChars > 0}, also hands the request's messages to the listener (opt-in only);
   * with {@code user}, the {@code user} field (the tenant, opt-in only).
   */
  public OpenAiRequestScanner(Listener listener, int captureChars, boolean user) {
    this.listener = listener;
    this.captureChars = captureChars;
    this.allFound = user ? FIELDS | USER_FOUND : FIELDS;
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
    if (captureChars > 0) {
      captureStep(c);
    }
    stepFields(c);
    if (captureKind != 0 && captureEnded(c)) {
      endCapture();
    }
  }

  private void captureStep(int c) {
    if (captureKind == 0 && captureNext && depth == 1 && !inString && c != ':' && !isSpace(c)) {
      captureNext = false;
      captureKind = c == '"' || c == '[' || c == '{' ? c : 's';
      captured = new java.io.ByteArrayOutputStream();
      capturedTotal = 0;
    }
    if (captureKind != 0) {
      if (captureKind == 's' && (c == ',' || c == '}')) {
        return; // the scalar ended before this byte
      }
      if ((c & 0xC0) != 0x80) {
        capturedTotal++; // characters, not UTF-8 continuation bytes
      }
      if (captured.size() < captureChars * 4L) { // UTF-8: at most 4 bytes a character
        captured.write(c);
      }
    }
  }

  private boolean captureEnded(int c) {
    switch (captureKind) {
      case '"':
        return !inString && c == '"';
      case '[':
      case '{':
        return depth == 1 && (c == ']' || c == '}');
      default:
        return c == ',' || c == '}';
    }
  }

  private void endCapture() {
    captureKind = 0;
    inputSeen = true;
    String json = new String(captured.toByteArray(), StandardCharsets.UTF_8);
    listener.onInputMessages(json, capturedTotal);
    captured = null;
    if (found == allFound) {
      done = true;
    }
  }

  private void stepFields(int c) {
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
      wantedKey = tokenOverflow ? null : wanted();
      captureNext = captureChars > 0 && !tokenOverflow && (tokenIs(MESSAGES) || tokenIs(PROMPT));
    } else if (wantedKey != null && !tokenOverflow && wantedKey.equals("model")) {
      listener.onModel(new String(token, 0, tokenLength, StandardCharsets.UTF_8));
      found(wantedKey);
    } else if (wantedKey != null && !tokenOverflow && wantedKey.equals(USER)) {
      listener.onUser(new String(token, 0, tokenLength, StandardCharsets.UTF_8));
      found(wantedKey);
    }
  }

  private void endScalar() {
    capturingScalar = false;
    if (wantedKey == null || tokenOverflow || wantedKey.equals(USER)) {
      wantedKey = null;
      return; // a user that is not a string (null, a number) names no tenant
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
    int bit =
        key.equals("model") ? 1 : key.equals("stream") ? 2 : key.equals(USER) ? USER_FOUND : 4;
    found |= bit;
    if (found == allFound && (captureChars == 0 || inputSeen)) {
      done = true;
    }
  }

  /**
   * The key just read when it is one of {@link #WANTED} or the asked-for user (that constant), else
   * null.
   */
  private String wanted() {
    for (int i = 0; i < WANTED.length; i++) {
      if (tokenIs(WANTED_BYTES[i])) {
        return WANTED[i];
      }
    }
    return allFound != FIELDS && tokenIs(USER_BYTES) ? USER : null;
  }

  /** Compared as bytes: every top-level key passes here, and most are not wanted. */
  private boolean tokenIs(byte[] key) {
    return tokenLength == key.length && Arrays.equals(token, 0, tokenLength, key, 0, key.length);
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
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
