package dev.llmlat.agent.gatewayapp;

import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

/**
 * A gateway that serves gRPC: {@code llmlat.test.Gateway/Generate} (server streaming) takes an
 * OpenAI chat request's JSON, relays it to the engine over HTTP (the JDK client) and answers with
 * one message per SSE event of the engine's stream, sent as it arrives (the application does not
 * wait for {@code isReady}, as most relays do not). Args: upstream base URL. Prints {@code
 * LISTENING <port>}.
 */
public final class GrpcGatewayMain {
  public static final MethodDescriptor<byte[], byte[]> GENERATE =
      MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
          .setFullMethodName("llmlat.test.Gateway/Generate")
          .setRequestMarshaller(Bytes.INSTANCE)
          .setResponseMarshaller(Bytes.INSTANCE)
          .build();

  private GrpcGatewayMain() {}

  public static void main(String[] args) throws Exception {
    Upstream upstream = new Upstream(args[0]);
    Server server =
        NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
            .addService(
                ServerServiceDefinition.builder("llmlat.test.Gateway")
                    .addMethod(
                        GENERATE,
                        ServerCalls.asyncServerStreamingCall(
                            (request, responses) -> relay(upstream, request, responses)))
                    .build())
            .build()
            .start();
    System.out.println("LISTENING " + server.getPort());
    server.awaitTermination();
  }

  private static void relay(Upstream upstream, byte[] request, StreamObserver<byte[]> responses) {
    try {
      HttpResponse<InputStream> response = upstream.forward("/v1/chat/completions", request);
      try (BufferedReader lines =
          new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
        for (String line; (line = lines.readLine()) != null; ) {
          if (line.startsWith("data: ") && !line.equals("data: [DONE]")) { // the close ends it
            responses.onNext(line.substring(6).getBytes(StandardCharsets.UTF_8));
          }
        }
      }
      responses.onCompleted();
    } catch (IOException | InterruptedException e) {
      responses.onError(e);
    }
  }

  /** Messages as their bytes. */
  public enum Bytes implements MethodDescriptor.Marshaller<byte[]> {
    INSTANCE;

    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
