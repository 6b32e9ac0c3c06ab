package dev.llmlat.agent.gateway.internal;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.ServerCall;

/**
 * One streamed gRPC response through the gateway: each message sent is a chunk, and the time from
 * the call answering {@code isReady()} false after a send to its being ready again is backpressure.
 * gRPC turns a call not ready once more than its on-ready threshold (32 KiB by default) waits in
 * the transport: the client's HTTP/2 window, or the connection's, or the socket, is full (gRPC does
 * not say which). Whether or not the application itself waits for {@code onReady}, the messages
 * sent meanwhile leave only once the call is ready again. A spell shorter than {@link
 * GatewayExchange#BLOCKED_WRITE_NANOS} is the transport catching up with a burst of sends, not the
 * client holding it back, and is not counted.
 */
final class GrpcGatewayCall<ReqT, RespT>
    extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {
  private final GatewayExchange exchange;

  /** When the call last turned not ready ({@link System#nanoTime}); 0: ready. */
  private long blockedAtNanoTime;

  GrpcGatewayCall(ServerCall<ReqT, RespT> call, GatewayExchange exchange) {
    super(call);
    this.exchange = exchange;
    exchange.backpressureObserved();
  }

  @Override
  public void sendMessage(RespT message) {
    long sendingAt = exchange.sendingAt();
    GrpcSendQueue.sending(this);
    try {
      super.sendMessage(message);
    } finally {
      GrpcSendQueue.sent();
    }
    exchange.onMessageSent(sendingAt);
    if (!super.isReady()) {
      blocked();
    }
  }

  private synchronized void blocked() {
    if (blockedAtNanoTime == 0) {
      blockedAtNanoTime = System.nanoTime();
    }
  }

  /**
   * Ready again ({@link GrpcSendQueue} as the bytes leave, else the listener's {@code onReady}), or
   * the call is over (its last messages left, or never will): a block ends.
   */
  synchronized void unblocked() {
    if (blockedAtNanoTime != 0) {
      exchange.onBlockingWriteReturned(blockedAtNanoTime);
      blockedAtNanoTime = 0;
    }
  }

  /** The application's listener, told first of the moments this call watches for. */
  ServerCall.Listener<ReqT> listen(ServerCall.Listener<ReqT> listener) {
    return new ObservedListener(listener);
  }

  private final class ObservedListener
      extends ForwardingServerCallListener.SimpleForwardingServerCallListener<ReqT> {
    ObservedListener(ServerCall.Listener<ReqT> listener) {
      super(listener);
    }

    @Override
    public void onReady() {
      // runs on the call's executor, maybe long after the transport said so: ready now?
      if (GrpcGatewayCall.this.isReady()) {
        unblocked();
      }
      super.onReady();
    }

    @Override
    public void onComplete() {
      unblocked(); // before the agent's listener ends the span, which it does after this returns
      super.onComplete();
    }

    @Override
    public void onCancel() {
      unblocked();
      super.onCancel();
    }
  }
}
