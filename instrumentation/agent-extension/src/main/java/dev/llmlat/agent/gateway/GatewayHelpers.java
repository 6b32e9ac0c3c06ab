package dev.llmlat.agent.gateway;

import java.util.ArrayList;
import java.util.List;

/** The helper classes injected next to the server stack (no muzzle code generation here). */
final class GatewayHelpers {
  private static final String PACKAGE = "dev.llmlat.agent.gateway.internal.";
  private static final List<String> COMMON =
      List.of(
          PACKAGE + "OpenAiEndpoint",
          PACKAGE + "OpenAiRequestScanner",
          PACKAGE + "OpenAiRequestScanner$Listener",
          PACKAGE + "SseEventCounter",
          PACKAGE + "ContentCapture",
          PACKAGE + "CompletionText",
          PACKAGE + "GatewayExchange",
          PACKAGE + "GatewayExchange$ResponseMode");

  private GatewayHelpers() {}

  static List<String> withCommon(String... specific) {
    List<String> all = new ArrayList<>(COMMON);
    all.addAll(List.of(specific));
    return all;
  }
}
