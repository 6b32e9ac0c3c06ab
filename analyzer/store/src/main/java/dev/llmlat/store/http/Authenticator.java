package dev.llmlat.store.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Map;

/**
 * Checks a request's credentials the ways ClickHouse's HTTP interface takes them: HTTP basic auth,
 * the {@code X-ClickHouse-User}/{@code X-ClickHouse-Key} headers, or the {@code user}/{@code
 * password} URL parameters (one way per request). The only user is {@code default}.
 */
final class Authenticator {
  static final String USER = "default";

  private final byte[] password; // null: no password required

  Authenticator(String password) {
    this.password = password == null ? null : password.getBytes(StandardCharsets.UTF_8);
  }

  /** Who the request says it is. */
  record Credentials(String user, String password, boolean given) {}

  /** Refuses the request with ClickHouse's error, or returns null when it may proceed. */
  ClickHouseError check(HttpRequest request, Map<String, String> params) {
    if (password == null) {
      return null; // started without a password (loopback only): whatever the client sends is fine
    }
    Credentials credentials;
    try {
      credentials = credentials(request, params);
    } catch (IllegalArgumentException e) {
      return ClickHouseError.of(ClickHouseError.REQUIRED_PASSWORD, e.getMessage());
    }
    if (!credentials.given() || credentials.password().isEmpty()) {
      return ClickHouseError.of(
          ClickHouseError.REQUIRED_PASSWORD,
          credentials.user()
              + ": Authentication failed: password is required (llmlat's store: user default, the password in the file"
              + " `llmlat services status` names)");
    }
    boolean userOk = USER.equals(credentials.user());
    boolean passwordOk =
        MessageDigest.isEqual(password, credentials.password().getBytes(StandardCharsets.UTF_8));
    if (!userOk || !passwordOk) {
      return ClickHouseError.of(
          ClickHouseError.AUTHENTICATION_FAILED,
          credentials.user()
              + ": Authentication failed: password is incorrect, or there is no user with such name");
    }
    return null;
  }

  static Credentials credentials(HttpRequest request, Map<String, String> params) {
    String headerUser = request.header("X-ClickHouse-User");
    String headerKey = request.header("X-ClickHouse-Key");
    String authorization = request.header("Authorization");
    boolean viaParams = params.containsKey("user") || params.containsKey("password");
    boolean viaHeaders = headerUser != null || headerKey != null;
    if (viaHeaders && (authorization != null || viaParams)) {
      throw new IllegalArgumentException(
          "Invalid authentication: it is not allowed to use X-ClickHouse HTTP headers"
              + " and other authentication methods simultaneously");
    }
    if (authorization != null && viaParams) {
      throw new IllegalArgumentException(
          "Invalid authentication: it is not allowed to use Authorization HTTP header"
              + " and authentication via parameters simultaneously");
    }
    if (viaHeaders) {
      return new Credentials(orDefault(headerUser), headerKey == null ? "" : headerKey, true);
    }
    if (authorization != null) {
      if (!authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
        throw new IllegalArgumentException(
            "Invalid authentication: only the Basic scheme is supported");
      }
      String decoded;
      try {
        decoded =
            new String(
                Base64.getDecoder().decode(authorization.substring(6).strip()),
                StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "Invalid authentication: the Basic credentials are not base64");
      }
      int colon = decoded.indexOf(':');
      return colon < 0
          ? new Credentials(orDefault(decoded), "", true)
          : new Credentials(
              orDefault(decoded.substring(0, colon)), decoded.substring(colon + 1), true);
    }
    if (viaParams) {
      String p = params.get("password");
      return new Credentials(orDefault(params.get("user")), p == null ? "" : p, true);
    }
    return new Credentials(USER, "", false);
  }

  private static String orDefault(String user) {
    return user == null || user.isEmpty() ? USER : user;
  }
}
