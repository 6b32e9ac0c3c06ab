package dev.llmlat.store.http.wire;

import java.time.Duration;
import java.util.Objects;

/**
 * How long one connection may take over a request, so that slow or idle clients cannot hold
 * connections open forever.
 *
 * @param header the request line and all headers must arrive within this, from their first byte
 * @param keepAlive how long a connection may wait for its next request (ClickHouse's
 *     keep_alive_timeout)
 * @param receive the longest pause between bytes of a request body (ClickHouse's
 *     http_receive_timeout)
 */
public record HttpTimeouts(Duration header, Duration keepAlive, Duration receive) {
  public static final HttpTimeouts DEFAULTS = new HttpTimeouts(Duration.ofSeconds(30), Duration.ofSeconds(10),
      Duration.ofSeconds(30));

  public HttpTimeouts {
    check("header", header);
    check("keep-alive", keepAlive);
    check("receive", receive);
  }

  private static void check(String what, Duration d) {
    Objects.requireNonNull(d, what);
    // socket timeouts are whole milliseconds in an int, and 0 would mean "never"
    if (d.toMillis() < 1 || d.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException("the HTTP " + what + " timeout must be between 1 ms and 24 days, not " + d);
    }
  }

  /** "500 ms", "30 s": for the reasons sent to clients. */
  static String text(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
  }

  int headerMillis() {
    return (int) header.toMillis();
  }

  int keepAliveMillis() {
    return (int) keepAlive.toMillis();
  }

  int receiveMillis() {
    return (int) receive.toMillis();
  }
}
