package dev.llmlat.agent.gateway.internal;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * Observes a gRPC gateway's streamed responses: added first to a server's interceptors, so it runs
 * last, inside the agent's tracing interceptor, with the call's SERVER span current. Calls that
 * answer with one message (unary, client streaming) are not streamed and are left alone, as a plain
 * HTTP body is.
 */
public final class GrpcGatewayInterceptor implements ServerInterceptor {
  private static final GrpcGatewayInterceptor INSTANCE = new GrpcGatewayInterceptor();

  private GrpcGatewayInterceptor() {}

  /** Called as a server builder builds: puts the interceptor first in its list, once. */
  public static void install(List<ServerInterceptor> interceptors) {
    if (interceptors != null && !interceptors.contains(INSTANCE)) {
      interceptors.add(0, INSTANCE);
    }
  }

  @Override
  public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
      ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
    if (call.getMethodDescriptor().getType().serverSendsOneMessage()) {
      return next.startCall(call, headers);
    }
    GatewayExchange exchange = GatewayExchange.forMessages(header(headers));
    if (!exchange.hasSpan()) {
      return next.startCall(call, headers);
    }
    GrpcGatewayCall<ReqT, RespT> observed = new GrpcGatewayCall<>(call, exchange);
    return observed.listen(next.startCall(observed, headers));
  }

  /** A request header by name (the tenant may come from one); null when absent or not ASCII. */
  private static Function<String, String> header(Metadata headers) {
    return name -> {
      try {
        return headers.get(
            Metadata.Key.of(name.toLowerCase(Locale.ROOT), Metadata.ASCII_STRING_MARSHALLER));
      } catch (IllegalArgumentException e) {
        return null; // not a name gRPC allows for text metadata
      }
    };
  }
}
