package dev.llmlat.gatewayapps;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.proxy.handler.ProxyHandler;
import io.vertx.httpproxy.HttpProxy;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/**
 * The gateway on Vert.x 5 as its users write it: the stock reverse proxy of vertx-web-proxy on a
 * router, in front of the engine (Vert.x 5's {@code HttpClientAgent} is the client). Args: engine
 * base URL. Prints {@code LISTENING <port>} once it serves.
 */
public final class Vertx5Gateway {
  private Vertx5Gateway() {}

  public static void main(String[] args) {
    URI upstream = URI.create(args[0]);
    Vertx vertx = Vertx.vertx();
    // an https engine: TLS, trusted as the JVM's javax.net.ssl settings say
    HttpClientOptions options = new HttpClientOptions().setSsl("https".equals(upstream.getScheme()));
    PoolOptions pool = new PoolOptions();
    if (args.length > 1) {
      pool.setHttp1MaxSize(Integer.parseInt(args[1]));
    }
    HttpClient client = vertx.createHttpClient(options, pool);
    HttpProxy proxy = HttpProxy.reverseProxy(client).origin(upstream.getPort(), upstream.getHost());
    Router router = Router.router(vertx);
    router.route("/v1/*").handler(ProxyHandler.create(proxy));
    vertx.createHttpServer()
        .requestHandler(router)
        .listen(0, "127.0.0.1")
        .onSuccess(server -> {
          // the versions in use, for the test to check it runs what it names
          io.netty.util.Version netty = io.netty.util.Version.identify().get("netty-codec-http");
          System.out.println("VERTX " + resource("META-INF/vertx/vertx-version.txt") + " NETTY "
              + (netty == null ? "?" : netty.artifactVersion()));
          System.out.println("LISTENING " + server.actualPort());
        })
        .onFailure(failure -> {
          failure.printStackTrace();
          System.exit(1);
        });
  }

  private static String resource(String name) {
    try (InputStream in = Vertx5Gateway.class.getClassLoader().getResourceAsStream(name)) {
      return in == null ? "?" : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      return "?";
    }
  }
}
