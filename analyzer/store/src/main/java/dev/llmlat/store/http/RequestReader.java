package dev.llmlat.store.http;

import dev.llmlat.store.internal.InsertFromFile;
import dev.llmlat.store.internal.SqlText;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Reads a query request the way ClickHouse's HTTP interface does: the query from {@code ?query=}
 * and/or the body (with {@code ?query=}, the body continues it, or is an INSERT's data), the
 * protocol's own parameters and headers, and every other parameter as a setting for this query.
 *
 * <p>An INSERT's data never sits whole in memory: it is copied from the (decompressed) body into a
 * staging file the engine reads with {@code FROM INFILE}.
 */
final class RequestReader {
  /** Parameters of the protocol, not settings of the engine. */
  private static final Set<String> PROTOCOL =
      Set.of(
          "query",
          "default_format",
          "query_id",
          "database",
          "user",
          "password",
          "session_id",
          "session_timeout",
          "session_check",
          "compress",
          "decompress",
          "enable_http_compression",
          "http_zlib_compression_level",
          "wait_end_of_query",
          "http_wait_end_of_query",
          "send_progress_in_http_headers",
          "http_headers_progress_interval_ms",
          "buffer_size",
          "http_response_buffer_size",
          "client_protocol_version",
          "role",
          "quota_key",
          "add_http_cors_header",
          "readonly",
          "replace_running_query",
          "stacktrace",
          "cancel_http_readonly_queries_on_client_close",
          "http_native_compression_disable_checksumming_on_decompress");

  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");
  private static final int SQL_PREFIX =
      1 << 20; // the statement before an INSERT's inline data lies in this much
  static final long MAX_QUERY_BYTES =
      64L << 20; // a statement (not data) larger than this is refused

  /** A refusal while reading the request. */
  static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;
    final transient ClickHouseError error;

    Refused(ClickHouseError error) {
      super(error.text(), null, false, false);
      this.error = error;
    }
  }

  private final Supplier<Path> stagingDir;

  RequestReader(Supplier<Path> stagingDir) {
    this.stagingDir = stagingDir;
  }

  QueryRequest read(HttpRequest request, Map<String, String> params) throws IOException, Refused {
    boolean get = request.method().equals("GET") || request.method().equals("HEAD");
    String queryParam = params.get("query");
    String defaultFormat =
        firstOf(
            params.get("default_format"), request.header("X-ClickHouse-Format"), "TabSeparated");
    Map<String, String> settings = new LinkedHashMap<>();
    Map<String, String> queryParams = new LinkedHashMap<>();
    for (Map.Entry<String, String> p : params.entrySet()) {
      String name = p.getKey();
      if (PROTOCOL.contains(name)) {
        continue;
      }
      if (name.startsWith("param_")) {
        queryParams.put(name.substring(6), p.getValue());
      } else if (NAME.matcher(name).matches()) {
        settings.put(name, p.getValue());
      } else {
        throw new Refused(
            ClickHouseError.of(ClickHouseError.UNKNOWN_SETTING, "Unknown setting '" + name + "'"));
      }
    }
    int readonly = level(params.get("readonly"));
    if (get && readonly == 0) {
      readonly = 2; // ClickHouse: "method GET implies readonly"; settings may still change
    }
    String encoding =
        isOn(params.get("enable_http_compression"))
            ? Codecs.pickEncoding(request.header("Accept-Encoding"))
            : null;

    InputStream body;
    try {
      body =
          Codecs.decode(
              request.body(), request.header("Content-Encoding"), isOn(params.get("decompress")));
    } catch (Codecs.UnsupportedEncoding e) {
      throw new Refused(
          ClickHouseError.of(ClickHouseError.UNKNOWN_COMPRESSION_METHOD, e.getMessage()));
    }
    String sql;
    Path dataFile = null;
    try {
      if (queryParam != null && !get) {
        SqlText head = SqlText.of(queryParam);
        if (head.isInsertWithFormat() && !head.hasInlineData()) {
          // ?query=INSERT ... FORMAT x, the body is the data
          dataFile = stage(body, new byte[0], 0);
          sql = queryParam;
        } else {
          sql =
              queryParam
                  + "\n"
                  + new String(readBounded(body, new byte[0]), StandardCharsets.UTF_8);
        }
      } else if (queryParam != null) {
        sql = queryParam;
      } else {
        byte[] prefix = body.readNBytes(SQL_PREFIX);
        String text = new String(prefix, StandardCharsets.UTF_8);
        SqlText lexed = SqlText.of(text);
        if (lexed.isInsertWithFormat() && lexed.hasInlineData()) {
          // INSERT ... FORMAT x followed by its data: the data goes to a file, the statement to the
          // engine
          int dataAt =
              text.substring(0, lexed.dataOffset()).getBytes(StandardCharsets.UTF_8).length;
          sql = text.substring(0, lexed.dataOffset());
          dataFile = stage(body, prefix, dataAt);
        } else if (lexed.isInsertWithFormat() && prefix.length < SQL_PREFIX) {
          // no data at all: given none, the engine would read its process's stdin (a terminal, or
          // a test runner's pipe); an empty file inserts nothing, as ClickHouse does
          sql = text;
          dataFile = stage(InputStream.nullInputStream(), new byte[0], 0);
        } else {
          sql = new String(readBounded(body, prefix), StandardCharsets.UTF_8);
        }
      }
    } catch (java.util.zip.ZipException e) {
      deleteQuietly(dataFile);
      throw new Refused(
          ClickHouseError.of(
              ClickHouseError.CANNOT_DECOMPRESS,
              "Cannot decompress the request body: " + e.getMessage()));
    }
    SqlText text = SqlText.of(sql);
    if (text.firstWord().equals("INSERT")
        && "Values".equals(text.format())
        && (dataFile == null || Files.size(dataFile) == 0)
        && !text.hasInlineData()) {
      deleteQuietly(dataFile);
      throw new Refused(ClickHouseError.of(ClickHouseError.NO_DATA_TO_INSERT, "No data to insert"));
    }
    if (text.statements() == 0) {
      deleteQuietly(dataFile);
      throw new Refused(ClickHouseError.of(ClickHouseError.SYNTAX_ERROR, "Empty query"));
    }
    if (text.statements() > 1) {
      deleteQuietly(dataFile);
      throw new Refused(
          ClickHouseError.of(ClickHouseError.SYNTAX_ERROR, "Multi-statements are not allowed"));
    }
    String statement = sql;
    if (dataFile != null) {
      sql = InsertFromFile.statement(sql, dataFile, text.format());
    }
    String format = text.format() != null ? text.format() : defaultFormat;
    String queryId =
        firstOf(
            params.get("query_id"),
            request.header("X-ClickHouse-Query-Id"),
            UUID.randomUUID().toString());
    String database =
        firstOf(params.get("database"), request.header("X-ClickHouse-Database"), null);
    return new QueryRequest(
        queryId,
        sql,
        text,
        dataFile,
        format,
        settings,
        queryParams,
        database,
        readonly,
        get,
        emptyToNull(params.get("session_id")),
        params.get("session_timeout"),
        isOn(params.get("session_check")),
        isOn(params.get("wait_end_of_query")) || isOn(params.get("http_wait_end_of_query")),
        encoding,
        isOn(params.get("compress")),
        isOn(params.get("replace_running_query")),
        statement);
  }

  /** The default output format when the statement names none. */
  static String defaultFormat(HttpRequest request, Map<String, String> params) {
    return firstOf(
        params.get("default_format"), request.header("X-ClickHouse-Format"), "TabSeparated");
  }

  private static byte[] readBounded(InputStream body, byte[] prefix) throws IOException, Refused {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    all.write(prefix);
    byte[] buffer = new byte[64 * 1024];
    int n;
    while ((n = body.read(buffer)) >= 0) {
      all.write(buffer, 0, n);
      if (all.size() > MAX_QUERY_BYTES) {
        throw new Refused(
            ClickHouseError.of(
                ClickHouseError.QUERY_IS_TOO_LARGE,
                "Query is too large (over "
                    + (MAX_QUERY_BYTES >> 20)
                    + " MiB): send an INSERT's data after FORMAT, or with ?query=INSERT ... FORMAT x"));
      }
    }
    return all.toByteArray();
  }

  private Path stage(InputStream body, byte[] prefix, int from) throws IOException {
    Path file = Files.createTempFile(stagingDir.get(), "http-insert-", ".bin");
    try (OutputStream out = Files.newOutputStream(file)) {
      out.write(prefix, from, prefix.length - from);
      body.transferTo(out);
    } catch (IOException | RuntimeException e) {
      deleteQuietly(file);
      throw e;
    }
    return file;
  }

  static void deleteQuietly(Path file) {
    if (file != null) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException ignored) {
        // a leftover staging file is harmless
      }
    }
  }

  private static int level(String readonly) throws Refused {
    if (readonly == null || readonly.isEmpty()) {
      return 0;
    }
    return switch (readonly.strip()) {
      case "0" -> 0;
      case "1" -> 1;
      case "2" -> 2;
      default ->
          throw new Refused(
              ClickHouseError.of(ClickHouseError.BAD_ARGUMENTS, "readonly must be 0, 1 or 2"));
    };
  }

  static boolean isOn(String value) {
    return value != null && (value.equals("1") || value.toLowerCase(Locale.ROOT).equals("true"));
  }

  private static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  private static String firstOf(String a, String b, String otherwise) {
    if (a != null && !a.isEmpty()) {
      return a;
    }
    return b != null && !b.isEmpty() ? b : otherwise;
  }
}
