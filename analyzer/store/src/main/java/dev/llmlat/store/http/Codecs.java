package dev.llmlat.store.http;

import com.clickhouse.data.stream.Lz4InputStream;
import com.clickhouse.data.stream.Lz4OutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Constructor;
import java.util.Locale;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.InflaterInputStream;

/**
 * The compressions ClickHouse's HTTP interface speaks: HTTP's Content-Encoding (gzip, deflate,
 * zstd) on requests, the same on answers when the client sends {@code enable_http_compression=1}
 * and Accept-Encoding, and ClickHouse's own block format ({@code decompress=1} on requests, {@code
 * compress=1} on answers: LZ4 blocks with CityHash checksums, as the official drivers write and
 * read them).
 */
final class Codecs {
  private Codecs() {}

  /** A Content-Encoding this server cannot read. */
  static final class UnsupportedEncoding extends Exception {
    private static final long serialVersionUID = 1L;

    UnsupportedEncoding(String message) {
      super(message);
    }
  }

  /** The request body as the engine should read it. */
  static InputStream decode(InputStream body, String contentEncoding, boolean clickHouseCompressed)
      throws IOException, UnsupportedEncoding {
    InputStream in = body;
    if (contentEncoding != null && !contentEncoding.isBlank()) {
      String e = contentEncoding.strip().toLowerCase(Locale.ROOT);
      in =
          switch (e) {
            case "gzip", "x-gzip" -> new GZIPInputStream(in, 64 * 1024);
            case "deflate" -> new InflaterInputStream(in);
            case "zstd" -> zstdIn(in);
            case "identity", "none" -> in;
            default ->
                throw new UnsupportedEncoding(
                    "Unknown Content-Encoding '"
                        + contentEncoding
                        + "': llmlat's store reads gzip, deflate and zstd");
          };
    }
    return clickHouseCompressed ? new Lz4InputStream(in) : in;
  }

  /**
   * The encoding to answer with: gzip, deflate or zstd from Accept-Encoding in the client's order,
   * or null.
   */
  static String pickEncoding(String acceptEncoding) {
    if (acceptEncoding == null) {
      return null;
    }
    for (String part : acceptEncoding.split(",")) {
      String[] pieces = part.strip().split(";");
      String name = pieces[0].strip().toLowerCase(Locale.ROOT);
      boolean refused = pieces.length > 1 && pieces[1].strip().replace(" ", "").equals("q=0");
      if (refused) {
        continue;
      }
      if (name.equals("gzip") || name.equals("deflate") || name.equals("zstd") && zstdAvailable()) {
        return name;
      }
    }
    return null;
  }

  /**
   * Wraps the answer's stream; closing the wrapper finishes the compression but leaves {@code out}
   * open.
   */
  static OutputStream encode(OutputStream out, String httpEncoding, boolean clickHouseCompressed)
      throws IOException {
    OutputStream o =
        new FilterOutputStream(out) {
          @Override
          public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
          }

          @Override
          public void close() throws IOException {
            out.flush(); // the socket stays open for the next request
          }
        };
    if (httpEncoding != null) {
      o =
          switch (httpEncoding) {
            case "gzip" -> new GZIPOutputStream(o, 64 * 1024, true);
            case "deflate" ->
                new DeflaterOutputStream(o, new java.util.zip.Deflater(), 64 * 1024, true);
            case "zstd" -> zstdOut(o);
            default -> throw new IllegalArgumentException(httpEncoding);
          };
    }
    return clickHouseCompressed ? new Lz4OutputStream(o, 1 << 20, null) : o;
  }

  // zstd-jni comes with kafka-clients at run time but is not on this module's compile class
  // path (its pom is another team's), so it is reached by reflection; answers fall back to gzip.
  private static final Constructor<?> ZSTD_IN =
      constructor("com.github.luben.zstd.ZstdInputStream", InputStream.class);
  private static final Constructor<?> ZSTD_OUT =
      constructor("com.github.luben.zstd.ZstdOutputStream", OutputStream.class);

  static boolean zstdAvailable() {
    return ZSTD_IN != null && ZSTD_OUT != null;
  }

  private static Constructor<?> constructor(String className, Class<?> argument) {
    try {
      return Class.forName(className).getConstructor(argument);
    } catch (ReflectiveOperationException | LinkageError e) {
      return null;
    }
  }

  private static InputStream zstdIn(InputStream in) throws IOException, UnsupportedEncoding {
    if (ZSTD_IN == null) {
      throw new UnsupportedEncoding("Content-Encoding zstd needs zstd-jni on the class path");
    }
    try {
      return (InputStream) ZSTD_IN.newInstance(in);
    } catch (ReflectiveOperationException | LinkageError e) {
      throw new IOException("zstd: " + e, e);
    }
  }

  private static OutputStream zstdOut(OutputStream out) throws IOException {
    try {
      return (OutputStream) ZSTD_OUT.newInstance(out);
    } catch (ReflectiveOperationException | LinkageError e) {
      throw new IOException("zstd: " + e, e);
    }
  }
}
