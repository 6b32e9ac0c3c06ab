package dev.llmlat.agent.gateway;

import java.util.ArrayList;
import java.util.List;

/**
 * The helper classes injected next to the server stack or HTTP client (no muzzle code generation
 * here): the ones every server hook or every upstream hook needs, plus each hook's own, named by
 * their simple names in {@code dev.llmlat.agent.gateway.internal}.
 */
final class GatewayHelpers {
  private static final String PACKAGE = "dev.llmlat.agent.gateway.internal.";
  private static final List<String> COMMON =
      List.of(
          PACKAGE + "OpenAiEndpoint",
          PACKAGE + "OpenAiRequestScanner",
          PACKAGE + "OpenAiRequestScanner$Listener",
          PACKAGE + "SseEventCounter",
          PACKAGE + "ContentCapture",
          PACKAGE + "TenantConfig",
          PACKAGE + "TenantConfig$Source",
          PACKAGE + "CompletionText",
          PACKAGE + "GatewayExchange",
          PACKAGE + "GatewayExchange$ResponseMode");

  private static final List<String> UPSTREAM =
      List.of(
          PACKAGE + "OpenAiEndpoint", PACKAGE + "SseEventCounter", PACKAGE + "UpstreamExchange");

  private GatewayHelpers() {}

  /** A server hook's helpers: the common ones and {@code specific}. */
  static List<String> withCommon(String... specific) {
    return with(COMMON, specific);
  }

  /** An upstream (HTTP client) hook's helpers: the upstream ones and {@code specific}. */
  static List<String> withUpstream(String... specific) {
    return with(UPSTREAM, specific);
  }

  /** The binary name of helper {@code simpleName} (nested ones with {@code $}). */
  static String helper(String simpleName) {
    return PACKAGE + simpleName;
  }

  private static List<String> with(List<String> base, String... specific) {
    List<String> all = new ArrayList<>(base);
    for (String name : specific) {
      all.add(PACKAGE + name);
    }
    return all;
  }
}
