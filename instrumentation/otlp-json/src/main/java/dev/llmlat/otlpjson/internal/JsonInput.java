package dev.llmlat.otlpjson.internal;

import com.fasterxml.jackson.core.JsonParser;
import dev.llmlat.otlpjson.InputFiles;
import dev.llmlat.otlpjson.ReadProgress;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;

/**
 * A streaming JSON parser over an OTLP/JSON file (see {@link InputFiles}), read failures are worded
 * by {@link InputFiles#invalid}.
 */
public final class JsonInput {
  private JsonInput() {}

  /**
   * A parser over the file, decompressing gzip, reporting {@code base + bytes read} of {@code
   * total}.
   */
  public static JsonParser parser(Path file, ReadProgress progress, long base, long total)
      throws IOException {
    InputStream in = InputFiles.open(file, progress, base, total);
    try {
      return InputFiles.jsonParser(in); // closing the parser closes the file
    } catch (IOException e) {
      in.close();
      throw e;
    }
  }
}
