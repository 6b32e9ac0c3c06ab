package dev.llmlat.agent.gateway.internal;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpan;
import java.util.List;

/**
 * Records the first message of a gateway's streamed gRPC call to its engine as the upstream first
 * chunk ({@link UpstreamExchange}): added first to a channel's interceptors, after the agent's
 * tracing interceptor put itself there, so it runs inside it, with the call's CLIENT span current
 * and the {@code traceparent} the engine receives already in the headers. Calls answered with one
 * message are not streamed and are left alone.
 */
public final class GrpcUpstreamInterceptor implements ClientInterceptor {
  private static final GrpcUpstreamInterceptor INSTANCE = new GrpcUpstreamInterceptor();
  private static final Metadata.Key<String> TRACEPARENT =
      Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);

  private GrpcUpstreamInterceptor() {}

  /** Called as a channel builder builds: puts the interceptor first in its list, once. */
  public static void install(List<ClientInterceptor> interceptors) {
    if (interceptors != null && !interceptors.contains(INSTANCE)) {
      interceptors.add(0, INSTANCE);
    }
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
      MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
    ClientCall<ReqT, RespT> call = next.newCall(method, callOptions);
    if (method.getType().serverSendsOneMessage()) {
      return call;
    }
    return new ObservedCall<>(call, Span.current(), LocalRootSpan.current());
  }

  private static final class ObservedCall<ReqT, RespT>
      extends ForwardingClientCall.SimpleForwardingClientCall<ReqT, RespT> {
    private final Span client;
    private final Span root;

    ObservedCall(ClientCall<ReqT, RespT> call, Span client, Span root) {
      super(call);
      this.client = client;
      this.root = root;
    }

    @Override
    public void start(Listener<RespT> listener, Metadata headers) {
      UpstreamExchange exchange =
          UpstreamExchange.forResponse(
              client, root, UpstreamExchange.parentId(headers.get(TRACEPARENT)), null, true);
      super.start(
          exchange == null ? listener : new ObservedListener<>(listener, exchange), headers);
    }
  }

  private static final class ObservedListener<RespT>
      extends ForwardingClientCallListener.SimpleForwardingClientCallListener<RespT> {
    private final UpstreamExchange exchange;

    ObservedListener(ClientCall.Listener<RespT> listener, UpstreamExchange exchange) {
      super(listener);
      this.exchange = exchange;
    }

    @Override
    public void onMessage(RespT message) {
      exchange.onMessage();
      super.onMessage(message);
    }
  }
}
