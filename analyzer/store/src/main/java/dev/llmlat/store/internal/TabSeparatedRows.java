package dev.llmlat.store.internal;

import dev.llmlat.store.QueryResult;
import dev.llmlat.store.RowStream;
import dev.llmlat.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Decodes {@code TabSeparatedWithNamesAndTypes} as it arrives, row by row, holding one buffer of
 * it: a server's reply (one output, one header) or the engine's streamed chunks (each a complete
 * output that repeats the two header lines, dropped after the first).
 */
public final class TabSeparatedRows implements RowStream {
  private static final int BUFFER = 64 * 1024;

  /** Where the outputs come from. */
  public interface Chunks {
    /**
     * The next output's bytes, or null when there are no more; a refusal is a {@link
     * StoreException}.
     */
    InputStream next() throws IOException;

    /**
     * Frees the source; {@code whole}: every output was read to its end, else the query may still
     * run and is stopped.
     */
    void close(boolean whole);
  }

  private final Chunks chunks;
  private final String description;
  private final List<QueryResult.Column> columns;
  private InputStream in;
  private byte[] buf = new byte[BUFFER];
  private int pos;
  private int limit;
  private boolean inEnded;
  private byte[] scratch = new byte[256];
  private boolean ended;
  private boolean closed;
  private List<String> lastRow; // a server's error text reads as a row of one column

  /**
   * Reads the first output's header. {@code first} is that output, already taken from {@code
   * chunks}; {@code description} names the source in failures.
   */
  public TabSeparatedRows(InputStream first, Chunks chunks, String description) {
    this.chunks = chunks;
    this.description = description;
    this.in = first;
    try {
      List<String> names = line();
      List<String> types = line();
      if (names == null || types == null) {
        this.columns = List.of();
        ended = true;
        return;
      }
      if (names.size() != types.size()) {
        throw new StoreException(
            description
                + ": malformed result header ("
                + names.size()
                + " names, "
                + types.size()
                + " types)");
      }
      List<QueryResult.Column> cols = new ArrayList<>(names.size());
      for (int i = 0; i < names.size(); i++) {
        cols.add(new QueryResult.Column(names.get(i), types.get(i)));
      }
      this.columns = List.copyOf(cols);
    } catch (IOException e) {
      close();
      throw new StoreException(description + ": reading the result failed: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  @Override
  public List<QueryResult.Column> columns() {
    return columns;
  }

  @Override
  public List<String> next() {
    if (ended || closed) {
      return null;
    }
    try {
      while (true) {
        if (in == null) {
          in = chunks.next();
          if (in == null) {
            ended = true;
            return null;
          }
          inEnded = false;
          pos = 0;
          limit = 0;
          line(); // each further output repeats the header
          line();
        }
        List<String> row = line();
        if (row != null) {
          if (row.size() != columns.size()) {
            // a server that fails midway writes its error into the body
            String text = String.join("\t", row.stream().map(String::valueOf).toList()).strip();
            text = text.length() <= 500 ? text : text.substring(0, 497) + "...";
            throw new StoreException(
                description
                    + (text.contains("DB::Exception")
                        ? " failed midway: " + text
                        : ": a result row has "
                            + row.size()
                            + " values for "
                            + columns.size()
                            + " columns: "
                            + text));
          }
          lastRow = row;
          return row;
        }
        in.close();
        in = null;
      }
    } catch (IOException e) {
      // a server failing midway writes its error into the body, then cuts the body off
      String left =
          (lastRow != null && lastRow.size() == 1 ? lastRow.get(0) + "\n" : "")
              + new String(buf, pos, limit - pos, StandardCharsets.UTF_8);
      int error = left.indexOf("Code: ");
      if (error >= 0 && left.contains("DB::Exception")) {
        String text = left.substring(error).strip();
        throw new StoreException(
            description
                + " failed midway: "
                + (text.length() <= 500 ? text : text.substring(0, 497) + "..."),
            e);
      }
      throw new StoreException(description + ": reading the result failed: " + e.getMessage(), e);
    }
  }

  @Override
  public boolean rowReady() {
    if (ended || closed || pos < limit) {
      return true;
    }
    try {
      return in != null && !inEnded && in.available() > 0;
    } catch (IOException e) {
      return true; // next() says what it is
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (in != null) {
        in.close();
      }
    } catch (IOException ignored) {
      // the source goes anyway
    } finally {
      in = null;
      chunks.close(ended);
    }
  }

  /** The next line of the current output as fields, or null at its end. */
  private List<String> line() throws IOException {
    int end = lineEnd();
    if (end < 0) {
      return null;
    }
    List<String> fields = new ArrayList<>(columns == null ? 8 : columns.size());
    int start = pos;
    for (int i = pos; ; i++) {
      if (i == end || buf[i] == '\t') {
        fields.add(field(start, i));
        start = i + 1;
        if (i == end) {
          break;
        }
      }
    }
    pos = end < limit ? end + 1 : end; // past the line break
    return fields;
  }

  /**
   * Where the line at {@link #pos} ends (its '\n', or the output's end), reading more as needed; -1
   * at the end.
   */
  private int lineEnd() throws IOException {
    int scanned = pos;
    while (true) {
      for (int i = scanned; i < limit; i++) {
        if (buf[i] == '\n') {
          return i;
        }
      }
      scanned = limit;
      if (inEnded) {
        return pos < limit ? limit : -1;
      }
      if (pos > 0) { // keep the line begun, at the buffer's start
        System.arraycopy(buf, pos, buf, 0, limit - pos);
        scanned -= pos;
        limit -= pos;
        pos = 0;
      }
      if (limit == buf.length) {
        buf = Arrays.copyOf(buf, buf.length * 2); // a line longer than the buffer
      }
      int n = in.read(buf, limit, buf.length - limit);
      if (n < 0) {
        inEnded = true;
      } else {
        limit += n;
      }
    }
  }

  /** The field in bytes [from, to): unescaped; null for {@code \N}. */
  private String field(int from, int to) {
    int backslash = -1;
    for (int i = from; i < to; i++) {
      if (buf[i] == '\\') {
        backslash = i;
        break;
      }
    }
    if (backslash < 0) {
      return new String(buf, from, to - from, StandardCharsets.UTF_8);
    }
    if (to - from == 2 && buf[from + 1] == 'N') {
      return null;
    }
    if (scratch.length < to - from) {
      scratch = new byte[Math.max(to - from, scratch.length * 2)];
    }
    int n = backslash - from;
    System.arraycopy(buf, from, scratch, 0, n);
    for (int i = backslash; i < to; i++) {
      byte b = buf[i];
      if (b == '\\' && i + 1 < to) {
        byte e = buf[++i];
        scratch[n++] =
            switch (e) {
              case 'n' -> (byte) '\n';
              case 't' -> (byte) '\t';
              case 'r' -> (byte) '\r';
              case 'b' -> (byte) '\b';
              case 'f' -> (byte) '\f';
              case '0' -> (byte) 0;
              case 'a' -> (byte) 7;
              case 'v' -> (byte) 11;
              default -> e; // \\ \' and any other escaped character
            };
      } else {
        scratch[n++] = b;
      }
    }
    return new String(scratch, 0, n, StandardCharsets.UTF_8);
  }
}
