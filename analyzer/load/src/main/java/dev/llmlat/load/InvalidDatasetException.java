package dev.llmlat.load;

/** A dataset file that cannot be used; the message names the file and, where it can, the line. */
public final class InvalidDatasetException extends IllegalArgumentException {
  public InvalidDatasetException(String message) {
    super(message);
  }
}
