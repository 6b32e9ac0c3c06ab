package dev.llmlat.agent.gatewayapp;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.concurrent.Executors;

/**
 * A gateway that speaks OpenAI over HTTP to its callers (JDK {@code HttpServer}) and gRPC to its
 * engine: each chat request's JSON goes as one message to {@code llmlat.test.Engine/Generate}
 * (server streaming) and each message back is relayed as an SSE event. Args: the engine's {@code
 * host:port}. Prints {@code LISTENING <port>}.
 */
public final class GrpcUpstreamGatewayMain {
  public static final MethodDescriptor<byte[], byte[]> ENGINE_GENERATE =
      MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
          .setFullMethodName("llmlat.test.Engine/Generate")
          .setRequestMarshaller(GrpcGatewayMain.Bytes.INSTANCE)
          .setResponseMarshaller(GrpcGatewayMain.Bytes.INSTANCE)
          .build();

  private GrpcUpstreamGatewayMain() {}

  public static void main(String[] args) throws IOException {
    ManagedChannel engine = NettyChannelBuilder.forTarget(args[0]).usePlaintext().build();
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    server.createContext("/v1/", exchange -> relay(engine, exchange));
    server.setExecutor(Executors.newFixedThreadPool(8));
    server.start();
    System.out.println("LISTENING " + server.getAddress().getPort());
  }

  private static void relay(ManagedChannel engine, HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] body = exchange.getRequestBody().readAllBytes();
      Iterator<byte[]> messages =
          ClientCalls.blockingServerStreamingCall(
              engine, ENGINE_GENERATE, CallOptions.DEFAULT, body);
      exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
      exchange.sendResponseHeaders(200, 0);
      OutputStream out = exchange.getResponseBody();
      try {
        while (messages.hasNext()) {
          out.write(event(new String(messages.next(), StandardCharsets.UTF_8)));
          out.flush();
        }
      } catch (StatusRuntimeException e) {
        out.write(event("{\"error\":\"" + e.getStatus().getCode() + "\"}"));
      }
      out.write(event("[DONE]"));
      out.close();
    }
  }

  private static byte[] event(String data) {
    return ("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8);
  }
}
