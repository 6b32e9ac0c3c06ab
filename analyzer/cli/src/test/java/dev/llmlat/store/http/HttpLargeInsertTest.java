package dev.llmlat.store.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A 1 GiB insert into {@code llmlat store serve} running in a child JVM with a 128 MB heap: the
 * request body streams to the engine (the test makes its rows as it sends them, holding none), the
 * server keeps every row and stays up. {@code -Dllmlat.test.insertBytes=N} sets another size.
 */
class HttpLargeInsertTest {
  static final long BYTES = Long.getLong("llmlat.test.insertBytes", 1L << 30);
  static final int PAYLOAD = 100;

  @TempDir Path dir;

  @Test
  void aOneGigabyteInsertStreamsThroughAServerWithA128MegabyteHeap() throws Exception {
    Process server = startServer();
    try {
      String url = awaitUrl(server);
      Http http = new Http(url);
      assertThat(
              http.post("CREATE TABLE big (n UInt64, s String) ENGINE = MergeTree ORDER BY tuple()")
                  .status())
          .isEqualTo(200);

      long started = System.nanoTime();
      long[] sent = insert(url, "INSERT INTO big FORMAT TabSeparated");
      double seconds = (System.nanoTime() - started) / 1e9;
      long rows = sent[0];

      assertThat(server.isAlive()).as("server alive after the insert").isTrue();
      assertThat(http.get(Map.of()).body()).isEqualTo("Ok.\n");
      assertThat(http.post("SELECT count(), sum(n), sum(length(s)) FROM big").body().strip())
          .isEqualTo(rows + "\t" + (rows * (rows - 1) / 2) + "\t" + rows * PAYLOAD);
      assertThat(Files.readString(dir.resolve("server.err"))).doesNotContain("OutOfMemoryError");
      assertThat(dir.resolve("data").resolve("tmp-inserts"))
          .isEmptyDirectory(); // the staged body is gone
      System.out.printf(
          "store serve -Xmx128m: inserted %,d bytes (%,d rows) in %.1f s: %,.0f rows/s, %,.0f MB/s;"
              + " server peak RSS %s, heap after GC at most %s%n",
          sent[1],
          rows,
          seconds,
          rows / seconds,
          sent[1] / seconds / 1e6,
          peakRss(server),
          peakHeapAfterGc());
    } finally {
      server.destroy();
      server.waitFor(30, TimeUnit.SECONDS);
      server.destroyForcibly();
    }
  }

  /**
   * Sends rows {@code n\tpayload} of {@value #PAYLOAD} characters until {@link #BYTES} are out,
   * made as they go; returns rows and bytes.
   */
  private static long[] insert(String url, String sql) throws IOException {
    HttpURLConnection c =
        (HttpURLConnection)
            URI.create(url + "/?query=" + URLEncoder.encode(sql, StandardCharsets.UTF_8))
                .toURL()
                .openConnection();
    c.setRequestMethod("POST");
    c.setDoOutput(true);
    c.setChunkedStreamingMode(64 * 1024);
    c.setReadTimeout(600_000);
    byte[] alphabet =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
            .repeat(4)
            .getBytes(StandardCharsets.US_ASCII);
    byte[] buffer = new byte[64 * 1024];
    long rows = 0;
    long bytes = 0;
    try (OutputStream out = c.getOutputStream()) {
      int at = 0;
      while (bytes + at < BYTES) {
        if (at > buffer.length - 128) {
          out.write(buffer, 0, at);
          bytes += at;
          at = 0;
        }
        byte[] number = Long.toString(rows).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(number, 0, buffer, at, number.length);
        at += number.length;
        buffer[at++] = '\t';
        System.arraycopy(alphabet, (int) (rows % 64), buffer, at, PAYLOAD);
        at += PAYLOAD;
        buffer[at++] = '\n';
        rows++;
      }
      out.write(buffer, 0, at);
      bytes += at;
    }
    int status = c.getResponseCode();
    String body =
        new String(
            (status == 200 ? c.getInputStream() : c.getErrorStream()).readAllBytes(),
            StandardCharsets.UTF_8);
    assertThat(status).as(body).isEqualTo(200);
    return new long[] {rows, bytes};
  }

  private Process startServer() throws IOException {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-Xmx128m",
                "-XX:+UseSerialGC",
                "-Xlog:gc:file=" + dir.resolve("gc.log"),
                "-cp",
                System.getProperty("java.class.path"),
                "dev.llmlat.cli.Llmlat",
                "store",
                "serve",
                "--port",
                "0",
                "--no-auth",
                "--data-dir",
                dir.resolve("data").toString()));
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .directory(dir.toFile())
            .redirectError(dir.resolve("server.err").toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    pb.environment().put("LLMLAT_HOME", dir.resolve("home").toString());
    return pb.start();
  }

  /** The URL the server prints once it serves. */
  private String awaitUrl(Process server) throws Exception {
    CompletableFuture<String> line =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                BufferedReader r =
                    new BufferedReader(
                        new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
                String first = r.readLine();
                Thread drain =
                    new Thread(
                        () -> {
                          try {
                            r.transferTo(java.io.Writer.nullWriter());
                          } catch (IOException ignored) {
                            // the server went
                          }
                        });
                drain.setDaemon(true);
                drain.start();
                return first;
              } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
    String first = line.get(60, TimeUnit.SECONDS);
    Matcher m = Pattern.compile(" at (http://\\S+)").matcher(String.valueOf(first));
    assertThat(m.find()).as("%s / %s", first, Files.readString(dir.resolve("server.err"))).isTrue();
    return m.group(1);
  }

  private static String peakRss(Process p) {
    try {
      return Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "status")).stream()
          .filter(l -> l.startsWith("VmHWM:"))
          .map(l -> l.substring(6).strip())
          .findFirst()
          .orElse("?");
    } catch (IOException e) {
      return "?";
    }
  }

  /**
   * The largest heap occupancy right after a collection in the server's GC log ("...->NM(...)").
   */
  private String peakHeapAfterGc() throws IOException {
    Matcher m = Pattern.compile("->(\\d+)M\\(").matcher(Files.readString(dir.resolve("gc.log")));
    long max = -1;
    while (m.find()) {
      max = Math.max(max, Long.parseLong(m.group(1)));
    }
    return max < 0 ? "? (no collection)" : max + " MB";
  }
}
