package dev.llmlat.load;

/** Where request inputs come from: a dataset file, or generated. Called from one thread. */
public interface PromptSource {
  /** The next request's input. */
  Prompt next();

  /** What the prompts are, for the summary (e.g. {@code sharegpt.json: 1,000 prompts}). */
  String description();
}
