package dev.llmlat.otlpjson;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The file is no readable OTLP/JSON: missing or no regular file, empty, truncated gzip, malformed
 * JSON, JSON of the wrong shape, or a value its field cannot hold. The message is the file and the
 * problem; the problem names where it is (the request and its line, the path to the value, the span
 * with its position, name and line).
 */
public final class InvalidOtlpJsonException extends IOException {
  private static final long serialVersionUID = 1L;

  private final Path file;
  private final String problem;

  public InvalidOtlpJsonException(Path file, String problem) {
    super(file + ": " + problem);
    this.file = file;
    this.problem = problem;
  }

  /** The problem followed by the cause's message in parentheses. */
  public InvalidOtlpJsonException(Path file, String problem, Throwable cause) {
    super(file + ": " + withCause(problem, cause), cause);
    this.file = file;
    this.problem = withCause(problem, cause);
  }

  private static String withCause(String problem, Throwable cause) {
    return problem + (cause.getMessage() == null ? "" : " (" + cause.getMessage() + ")");
  }

  public Path file() {
    return file;
  }

  /** The message without the file: what is wrong and where. */
  public String problem() {
    return problem;
  }
}
