package dev.llmlat.agent.gatewayapp;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.proxy.handler.ProxyHandler;
import io.vertx.httpproxy.HttpProxy;
import java.net.URI;

/**
 * The gateway on Vert.x: the stock reverse proxy of vertx-web-proxy in front of the engine, which
 * pipes the engine's response to the client as it arrives. Args: upstream base URL, optionally the
 * most HTTP/1 connections to it (the client's default otherwise). Prints {@code LISTENING <port>}.
 */
public final class VertxGatewayMain {
  private VertxGatewayMain() {}

  public static void main(String[] args) {
    URI upstream = URI.create(args[0]);
    Vertx vertx = Vertx.vertx();
    // an https engine: TLS, trusted as the JVM's javax.net.ssl settings say
    HttpClientOptions options =
        new HttpClientOptions().setSsl("https".equals(upstream.getScheme()));
    PoolOptions pool = new PoolOptions();
    if (args.length > 1) {
      pool.setHttp1MaxSize(Integer.parseInt(args[1]));
    }
    HttpClient client = vertx.createHttpClient(options, pool);
    HttpProxy proxy = HttpProxy.reverseProxy(client).origin(upstream.getPort(), upstream.getHost());
    Router router = Router.router(vertx);
    router.route("/v1/*").handler(ProxyHandler.create(proxy));
    vertx
        .createHttpServer()
        .requestHandler(router)
        .listen(0, "127.0.0.1")
        .onSuccess(server -> System.out.println("LISTENING " + server.actualPort()))
        .onFailure(
            failure -> {
              failure.printStackTrace();
              System.exit(1);
            });
  }
}
