package dev.llmlat.load;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Where the requests go: the endpoint URL and the API it speaks. A URL whose path already ends in
 * {@code /chat/completions} or {@code /completions} is used as it is (its API follows from it); any
 * other URL is the server's root (or its {@code /v1}) and gets the API's path appended.
 *
 * @param url the endpoint the requests are POSTed to
 * @param endpoint the API
 */
public record Target(URI url, Endpoint endpoint) {
  public Target {
    if (url == null || endpoint == null) {
      throw new IllegalArgumentException("a target needs a URL and an endpoint");
    }
    String problem = problem(url);
    if (problem != null) {
      throw new IllegalArgumentException(
          "URL '" + withoutCredentials(url.toString(), url) + "' " + problem);
    }
  }

  /**
   * The target {@code text} names, checked before any request: http or https, a host, a port from 1
   * to 65535 (the JDK's client would only refuse a bad one while sending, once per request).
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
    String problem = problem(uri);
    if (problem != null) {
      throw new IllegalArgumentException("URL '" + withoutCredentials(text, uri) + "' " + problem);
    }
    if (uri.getRawUserInfo() != null) {
      // it would travel in every span's url.full: credentials belong in --api-key
      throw new IllegalArgumentException(
          "URL '" + uri.getHost() + "' carries credentials; pass the key with --api-key instead");
    }
    String path = uri.getRawPath() == null ? "" : uri.getRawPath();
    Endpoint named =
        path.endsWith("/chat/completions")
            ? Endpoint.CHAT
            : path.endsWith("/completions") ? Endpoint.COMPLETIONS : null;
    if (named != null) {
      if (explicit != null && explicit != named) {
        throw new IllegalArgumentException(
            "URL '"
                + text
                + "' is the "
                + named.path()
                + " API but --endpoint asks for "
                + explicit.path());
      }
      return new Target(uri, named);
    }
    Endpoint endpoint = explicit == null ? Endpoint.CHAT : explicit;
    String root = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    String full =
        root.endsWith("/v1") ? root + endpoint.path().substring(3) : root + endpoint.path();
    try {
      return new Target(
          new URI(uri.getScheme(), null, uri.getHost(), uri.getPort(), full, uri.getQuery(), null),
          endpoint);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("URL '" + text + "': " + e.getReason());
    }
  }

  /** {@code text} without the user info {@code uri} carries: messages never repeat a password. */
  private static String withoutCredentials(String text, URI uri) {
    String authority = uri.getRawAuthority();
    int at = authority == null ? -1 : authority.lastIndexOf('@');
    return at < 0 ? text : text.replace(authority.substring(0, at + 1), "");
  }

  /** What makes {@code uri} no server to send to, said after the URL; null when nothing does. */
  private static String problem(URI uri) {
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      return "must start with http:// or https://";
    }
    if (uri.getHost() == null || uri.getHost().isEmpty()) {
      // URI leaves the host out when the authority does not parse as host:port: say which part is
      // wrong
      String authority = uri.getRawAuthority() == null ? "" : uri.getRawAuthority();
      authority =
          authority.substring(authority.lastIndexOf('@') + 1); // credentials are never repeated
      if (authority.isEmpty()) {
        return "names no host";
      }
      int colon = authority.lastIndexOf(':');
      String port = colon < 0 || authority.endsWith("]") ? null : authority.substring(colon + 1);
      if (port != null && !port.isEmpty() && port.chars().allMatch(Character::isDigit)) {
        if (port.length() > 5 || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
          return "has port " + port + ", outside 1-65535";
        }
      } else if (port != null && !port.isEmpty()) {
        return "has port '" + port + "', not a number";
      }
      String host =
          colon < 0 || authority.endsWith("]") ? authority : authority.substring(0, colon);
      return host.isEmpty() ? "names no host" : "has host '" + host + "', not a valid host name";
    }
    if (uri.getPort() != -1 && (uri.getPort() < 1 || uri.getPort() > 65535)) {
      return "has port " + uri.getPort() + ", outside 1-65535";
    }
    return null;
  }

  /** The server's port, the scheme's default where the URL names none. */
  public int port() {
    return url.getPort() >= 0
        ? url.getPort()
        : url.getScheme().equalsIgnoreCase("https") ? 443 : 80;
  }

  /** The server's model list ({@code /v1/models}), beside the endpoint. */
  public URI modelsUrl() {
    String path = url.getRawPath();
    String root =
        path.substring(
            0,
            path.length()
                - (endpoint == Endpoint.CHAT ? "/chat/completions" : "/completions").length());
    return url.resolve(root + "/models");
  }
}
