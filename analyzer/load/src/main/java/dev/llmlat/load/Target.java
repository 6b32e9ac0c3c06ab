package dev.llmlat.load;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Where the requests go: the endpoint URL and the API it speaks. A URL whose path already ends in
 * {@code /chat/completions} or {@code /completions} is used as it is (its API follows from it);
 * any other URL is the server's root (or its {@code /v1}) and gets the API's path appended.
 *
 * @param url the endpoint the requests are POSTed to
 * @param endpoint the API
 */
public record Target(URI url, Endpoint endpoint) {
  public Target {
    if (url == null || endpoint == null) {
      throw new IllegalArgumentException("a target needs a URL and an endpoint");
    }
  }

  /**
   * The target {@code text} names.
   *
   * @param explicit the API the user asked for, or null to take it from the URL (chat by default)
   * @throws IllegalArgumentException naming the URL and what is wrong with it
   */
  public static Target parse(String text, Endpoint explicit) {
    URI uri;
    try {
      uri = new URI(text.strip());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("URL '" + text + "' is not a URL: " + e.getReason());
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new IllegalArgumentException("URL '" + text + "' must start with http:// or https://");
    }
    if (uri.getHost() == null || uri.getHost().isEmpty()) {
      throw new IllegalArgumentException("URL '" + text + "' names no host");
    }
    if (uri.getRawUserInfo() != null) {
      // it would travel in every span's url.full: credentials belong in --api-key
      throw new IllegalArgumentException("URL '" + uri.getHost() + "' carries credentials; pass the key with --api-key instead");
    }
    String path = uri.getRawPath() == null ? "" : uri.getRawPath();
    Endpoint named = path.endsWith("/chat/completions") ? Endpoint.CHAT : path.endsWith("/completions") ? Endpoint.COMPLETIONS : null;
    if (named != null) {
      if (explicit != null && explicit != named) {
        throw new IllegalArgumentException("URL '" + text + "' is the " + named.path() + " API but --endpoint asks for " + explicit.path());
      }
      return new Target(uri, named);
    }
    Endpoint endpoint = explicit == null ? Endpoint.CHAT : explicit;
    String root = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    String full = root.endsWith("/v1") ? root + endpoint.path().substring(3) : root + endpoint.path();
    try {
      return new Target(new URI(uri.getScheme(), null, uri.getHost(), uri.getPort(), full, uri.getQuery(), null), endpoint);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("URL '" + text + "': " + e.getReason());
    }
  }

  /** The server's port, the scheme's default where the URL names none. */
  public int port() {
    return url.getPort() >= 0 ? url.getPort() : url.getScheme().equalsIgnoreCase("https") ? 443 : 80;
  }

  /** The server's model list ({@code /v1/models}), beside the endpoint. */
  public URI modelsUrl() {
    String path = url.getRawPath();
    String root = path.substring(0, path.length() - (endpoint == Endpoint.CHAT ? "/chat/completions" : "/completions").length());
    return url.resolve(root + "/models");
  }
}
