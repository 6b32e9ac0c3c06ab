package dev.llmlat.agent.it;

import dev.llmlat.agent.gatewayapp.GrpcUpstreamGatewayMain;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A streaming engine that speaks gRPC ({@code llmlat.test.Engine/Generate}, in this JVM, without
 * the agent): after a prefill pause it sends {@code messages} chat chunks {@code gapMillis} apart,
 * and logs what it saw of each call as {@link FakeEngine.Received}: the {@code traceparent} in its
 * metadata, when it arrived, its first and last sends (epoch ns, read before each send).
 */
final class GrpcEngine implements AutoCloseable {
  private static final Metadata.Key<String> TRACEPARENT =
      Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);
  private static final Context.Key<String> RECEIVED_TRACEPARENT = Context.key("traceparent");

  private final Server server;
  private final BlockingQueue<FakeEngine.Received> received = new LinkedBlockingQueue<>();
  private final int messages;
  private final long prefillMillis;
  private final long gapMillis;

  GrpcEngine(int messages, long prefillMillis, long gapMillis) throws IOException {
    this.messages = messages;
    this.prefillMillis = prefillMillis;
    this.gapMillis = gapMillis;
    ServerInterceptor headers =
        new ServerInterceptor() {
          @Override
          public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
              ServerCall<ReqT, RespT> call,
              Metadata metadata,
              ServerCallHandler<ReqT, RespT> next) {
            return Contexts.interceptCall(
                Context.current().withValue(RECEIVED_TRACEPARENT, metadata.get(TRACEPARENT)),
                call,
                metadata,
                next);
          }
        };
    ServerServiceDefinition service =
        ServerServiceDefinition.builder("llmlat.test.Engine")
            .addMethod(
                GrpcUpstreamGatewayMain.ENGINE_GENERATE,
                ServerCalls.asyncServerStreamingCall(this::generate))
            .build();
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
            .addService(ServerInterceptors.intercept(service, headers))
            .build()
            .start();
  }

  /** The gateway's target for this engine. */
  String target() {
    return "127.0.0.1:" + server.getPort();
  }

  FakeEngine.Received take() throws InterruptedException {
    FakeEngine.Received r = received.poll(30, TimeUnit.SECONDS);
    if (r == null) {
      throw new AssertionError("the gRPC engine received no call in 30 s");
    }
    return r;
  }

  private void generate(byte[] request, StreamObserver<byte[]> responses) {
    long arrival = FakeEngine.epochNanos();
    String traceparent = RECEIVED_TRACEPARENT.get();
    sleep(prefillMillis);
    long first = 0;
    long last = 0;
    for (int i = 0; i < messages; i++) {
      if (i > 0) {
        sleep(gapMillis);
      }
      last = FakeEngine.epochNanos();
      if (i == 0) {
        first = last;
      }
      responses.onNext(
          ("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok" + i + "\"}}]}")
              .getBytes(StandardCharsets.UTF_8));
    }
    responses.onCompleted();
    received.add(
        new FakeEngine.Received(
            GrpcUpstreamGatewayMain.ENGINE_GENERATE.getFullMethodName(),
            traceparent,
            first,
            arrival,
            last,
            0));
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }
}
