package dev.llmlat.load;

import java.util.Locale;
import java.util.Random;

/**
 * Generated prompts: a random sequence of common English words, each of which the usual BPE
 * tokenizers (GPT, Llama, Qwen) count as one token when preceded by a space, so a prompt of N words
 * is about N tokens; random, so no two prompts share a prefix the server could cache. Lengths are
 * drawn from a normal distribution (mean, standard deviation; 0 for a fixed length), rounded and
 * kept at least 1. Seeded: the same seed gives the same prompts.
 */
public final class SyntheticPrompts implements PromptSource {
  private static final String[] WORDS =
      ("the of and to in is that for it as was with be by on not he this are or his from at which but have an they"
              + " you were her she there been one all we their has would when if so no out up into do can more its only"
              + " time new some could these two may first then any like other than now people over such our man me even"
              + " most made after also did many well way down should because long just each where great how years little"
              + " world very still own see men work day get here between both life being under never know same last might"
              + " another while house around old three state must part take place again back off few public water small"
              + " good give hand high year end came point left number side away home light room")
          .split(" ");

  /**
   * Lengths in tokens: a mean and a standard deviation (0: every prompt the same).
   *
   * @param mean mean length, at least 1
   * @param stddev standard deviation, at least 0
   */
  public record Length(int mean, double stddev) {
    public Length {
      if (mean < 1 || mean > 1_000_000) {
        throw new IllegalArgumentException(
            "a length is between 1 and 1,000,000 tokens, not " + mean);
      }
      if (!(stddev >= 0) || Double.isInfinite(stddev)) {
        throw new IllegalArgumentException(
            "a length's standard deviation is 0 or more, not " + stddev);
      }
    }

    int draw(Random random) {
      return stddev == 0
          ? mean
          : (int)
              Math.max(1, Math.min(1_000_000, Math.round(mean + stddev * random.nextGaussian())));
    }

    @Override
    public String toString() {
      return stddev == 0
          ? Integer.toString(mean)
          : String.format(Locale.ROOT, "%d±%.0f", mean, stddev);
    }
  }

  private final Length input;
  private final Length output;
  private final Random random;

  public SyntheticPrompts(Length input, Length output, long seed) {
    this.input = input;
    this.output = output;
    this.random = new Random(seed);
  }

  @Override
  public Prompt next() {
    int words = input.draw(random);
    StringBuilder text = new StringBuilder(words * 6);
    for (int i = 0; i < words; i++) {
      if (i > 0) {
        text.append(' ');
      }
      text.append(WORDS[random.nextInt(WORDS.length)]);
    }
    return new Prompt(text.toString(), words, output.draw(random));
  }

  @Override
  public String description() {
    return "synthetic: input " + input + " tokens, output " + output + " tokens";
  }
}
