package dev.llmlat.agent.gateway.internal;

import io.grpc.internal.AbstractStream;
import io.opentelemetry.instrumentation.api.util.VirtualField;

/**
 * The transport's side of a gRPC gateway call's backpressure: grpc-java counts the bytes a stream
 * has queued for the wire and says the call is ready again once they fall below its threshold, on
 * the transport's thread. The listener's {@code onReady} that follows runs on the call's executor,
 * after whatever the application is doing there (a relay that blocks in its handler holds it until
 * the stream ends), so the block ends here, as the bytes leave.
 */
public final class GrpcSendQueue {
  private static final VirtualField<AbstractStream.TransportState, GrpcGatewayCall> CALLS =
      VirtualField.find(AbstractStream.TransportState.class, GrpcGatewayCall.class);

  /** The observed call sending on this thread, while its {@code sendMessage} runs. */
  private static final ThreadLocal<GrpcGatewayCall<?, ?>> SENDING = new ThreadLocal<>();

  private GrpcSendQueue() {}

  static void sending(GrpcGatewayCall<?, ?> call) {
    SENDING.set(call);
  }

  static void sent() {
    SENDING.remove();
  }

  /** Bytes were queued on {@code state}'s stream (the application's thread, inside a send). */
  public static void onSending(AbstractStream.TransportState state) {
    GrpcGatewayCall<?, ?> call = SENDING.get();
    if (call != null && CALLS.get(state) == null) {
      CALLS.set(state, call);
    }
  }

  /**
   * Bytes of {@code state}'s stream left for the wire; {@code queued} are still waiting, the call
   * is ready below {@code threshold}.
   */
  public static void onSent(AbstractStream.TransportState state, int queued, int threshold) {
    if (queued < threshold) {
      GrpcGatewayCall<?, ?> call = CALLS.get(state);
      if (call != null) {
        call.unblocked();
      }
    }
  }
}
