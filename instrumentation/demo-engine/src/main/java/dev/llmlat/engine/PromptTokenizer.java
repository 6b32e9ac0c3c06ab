package dev.llmlat.engine;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Counts prompt tokens the way a BPE tokenizer roughly does for English: each word or run of digits
 * is a token, each punctuation mark another, plus a few tokens of chat template per message. The
 * engine has no real vocabulary; only the count drives scheduling.
 */
final class PromptTokenizer {
  private static final Pattern TOKEN = Pattern.compile("\\p{L}+|\\p{N}+|[^\\s\\p{L}\\p{N}]");

  /** Role markers and separators a chat template adds per message. */
  static final int TEMPLATE_TOKENS_PER_MESSAGE = 4;

  private PromptTokenizer() {}

  static int count(String text) {
    int n = 0;
    Matcher m = TOKEN.matcher(text);
    while (m.find()) {
      n++;
    }
    return n;
  }
}
