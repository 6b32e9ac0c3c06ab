package dev.llmlat.agent.gatewayapp;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The gateway on Reactor Netty (the server and client under Spring WebFlux and Spring Cloud
 * Gateway): relays the engine's SSE stream buffer by buffer, flushing each, with Reactor Netty's
 * own client. Args: upstream base URL; {@code h2c} to serve HTTP/2 without TLS (prior knowledge, as
 * {@code HttpProtocol.H2C} alone does) instead of HTTP/1.1. Prints {@code LISTENING <port>}.
 */
public final class ReactorNettyGatewayMain {
  private ReactorNettyGatewayMain() {}

  public static void main(String[] args) {
    HttpClient upstream = HttpClient.create().baseUrl(args[0]);
    DisposableServer server =
        HttpServer.create()
            .host("127.0.0.1")
            .port(0)
            .protocol(
                args.length > 1 && args[1].equals("h2c") ? HttpProtocol.H2C : HttpProtocol.HTTP11)
            .route(
                routes ->
                    routes.post(
                        "/v1/**", (request, response) -> relay(upstream, request, response)))
            .bindNow();
    System.out.println("LISTENING " + server.port());
    server.onDispose().block();
  }

  private static Publisher<Void> relay(
      HttpClient upstream, HttpServerRequest request, HttpServerResponse response) {
    return request
        .receive()
        .aggregate()
        .asByteArray()
        .flatMap(
            body ->
                upstream
                    .headers(h -> h.set(HttpHeaderNames.CONTENT_TYPE, "application/json"))
                    .post()
                    .uri(request.uri())
                    .send(Mono.just(Unpooled.wrappedBuffer(body)))
                    .response(
                        (upstreamResponse, content) -> {
                          String contentType =
                              upstreamResponse
                                  .responseHeaders()
                                  .get(HttpHeaderNames.CONTENT_TYPE, "application/json");
                          response
                              .status(upstreamResponse.status())
                              .header(HttpHeaderNames.CONTENT_TYPE, contentType);
                          if (Upstream.isEventStream(contentType)) {
                            return response.send(
                                content.retain(), buffer -> true); // flush each buffer
                          }
                          return content
                              .aggregate()
                              .asByteArray()
                              .flatMap(
                                  all ->
                                      response
                                          .header(
                                              HttpHeaderNames.CONTENT_LENGTH,
                                              Integer.toString(all.length))
                                          .sendByteArray(Mono.just(all))
                                          .then());
                        })
                    .then());
  }
}
