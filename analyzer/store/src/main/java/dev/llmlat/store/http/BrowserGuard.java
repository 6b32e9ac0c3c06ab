package dev.llmlat.store.http;

import java.net.URI;
import java.util.Locale;
import java.util.Set;
import java.util.function.IntSupplier;

/**
 * Refuses what a web page in the user's browser could send to the store: a request from another
 * origin (a plain cross-origin POST needs no CORS preflight), and, without a password, any request
 * whose {@code Host} is not loopback, which is how DNS rebinding reaches a loopback server under a
 * name of its own. No request is ever answered with CORS headers.
 */
final class BrowserGuard {
  private static final Set<String> LOOPBACK_NAMES = Set.of("localhost", "127.0.0.1", "[::1]");

  private final boolean withoutPassword;
  private final IntSupplier port; // known once the server listens

  BrowserGuard(boolean withoutPassword, IntSupplier port) {
    this.withoutPassword = withoutPassword;
    this.port = port;
  }

  /** Why {@code request} is refused (403), or null. */
  String refusal(HttpRequest request) {
    String host = request.header("Host");
    if (withoutPassword && host != null && !isLoopback(host)) {
      return "this store serves without a password, so it answers only requests for localhost, 127.0.0.1 or [::1]"
          + " (port "
          + port.getAsInt()
          + "), not for Host "
          + host;
    }
    String origin = request.header("Origin");
    if (origin != null && !sameOrigin(origin, host)) {
      return "requests from web pages of another origin (" + origin + ") are refused";
    }
    String site = request.header("Sec-Fetch-Site");
    if (site != null && site.equalsIgnoreCase("cross-site")) {
      return "cross-site requests from web pages are refused";
    }
    return null;
  }

  private boolean isLoopback(String hostHeader) {
    String h = hostHeader.strip().toLowerCase(Locale.ROOT);
    int colon = h.lastIndexOf(':');
    String name = h;
    if (colon > h.lastIndexOf(']')) {
      name = h.substring(0, colon);
      if (!h.substring(colon + 1).equals(Integer.toString(port.getAsInt()))) {
        return false;
      }
    }
    return LOOPBACK_NAMES.contains(name);
  }

  /**
   * A page served from this server's own authority (none is: the store serves no pages, so this is
   * a client that sets Origin itself).
   */
  private static boolean sameOrigin(String origin, String host) {
    if (host == null) {
      return false;
    }
    try {
      URI uri = URI.create(origin.strip());
      if (uri.getScheme() == null
          || uri.getRawAuthority() == null
          || !uri.getScheme().equalsIgnoreCase("http")) {
        return false;
      }
      return uri.getRawAuthority().equalsIgnoreCase(host.strip())
          && (uri.getRawPath() == null || uri.getRawPath().isEmpty());
    } catch (IllegalArgumentException e) {
      return false; // "null" and other opaque origins
    }
  }
}
