package dev.llmlat.agent.gateway.internal;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.opentelemetry.context.Context;

/**
 * The contexts the agent's {@code netty-4.1} instrumentation keeps on a client channel: its own
 * CLIENT span's ({@code client-context}, while a response is awaited) and the parent it starts that
 * span under ({@code client-parent-context}: for Reactor Netty, the context of Reactor Netty's own
 * CLIENT span). They are the agent's internal attribute keys (agent 2.x, the library relocated
 * under {@code io.opentelemetry.javaagent.shaded}); looked up by name and never created here, so
 * another agent version just yields null (and {@link #parentIfNone} does nothing).
 */
final class NettyAgentContexts {
  private static final String PREFIX =
      "io.opentelemetry.javaagent.shaded.instrumentation.netty.v4_1.internal.AttributeKeys#";
  private static volatile AttributeKey<Context> clientKey;
  private static volatile AttributeKey<Context> clientParentKey;

  private NettyAgentContexts() {}

  static Context client(Channel channel) {
    AttributeKey<Context> key = clientKey;
    if (key == null) {
      key = clientKey = find("client-context");
    }
    return key == null || !channel.hasAttr(key) ? null : channel.attr(key).get();
  }

  static Context clientParent(Channel channel) {
    AttributeKey<Context> key = clientParentKey;
    if (key == null) {
      key = clientParentKey = find("client-parent-context");
    }
    return key == null || !channel.hasAttr(key) ? null : channel.attr(key).get();
  }

  /**
   * Makes {@code parent} the context the agent starts the channel's next CLIENT span under, unless
   * one is set already (the agent clears it as each response ends).
   */
  static void parentIfNone(Channel channel, Context parent) {
    AttributeKey<Context> key = clientParentKey;
    if (key == null) {
      key = clientParentKey = find("client-parent-context");
    }
    if (key != null) {
      channel.attr(key).compareAndSet(null, parent);
    }
  }

  /**
   * The key once the agent has created it (its class initializes with the first traced channel).
   */
  private static AttributeKey<Context> find(String name) {
    return AttributeKey.exists(PREFIX + name) ? AttributeKey.valueOf(PREFIX + name) : null;
  }
}
