package dev.llmlat.agent.gatewayapp;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/**
 * The gateway as a servlet on embedded Tomcat: streams are relayed from an async context on a
 * thread of the gateway's own (as servlet proxies do), plain bodies in the request thread, via the
 * JDK HttpClient. Args: upstream base URL. Prints {@code LISTENING <port>}.
 */
public final class TomcatGatewayMain {
  private TomcatGatewayMain() {}

  public static void main(String[] args) throws Exception {
    Tomcat tomcat = new Tomcat();
    tomcat.setBaseDir(Files.createTempDirectory("tomcat-gateway").toString());
    Connector connector = new Connector();
    connector.setPort(0);
    connector.setProperty("address", "127.0.0.1");
    tomcat.setConnector(connector);
    Context context = tomcat.addContext("", null);
    Tomcat.addServlet(context, "relay", new RelayServlet(new Upstream(args[0])))
        .setAsyncSupported(true);
    context.addServletMappingDecoded("/v1/*", "relay");
    tomcat.start();
    System.out.println("LISTENING " + connector.getLocalPort());
    tomcat.getServer().await();
  }

  private static final class RelayServlet extends HttpServlet {
    private final transient Upstream upstream;
    private final transient ExecutorService relays = Executors.newCachedThreadPool();

    RelayServlet(Upstream upstream) {
      this.upstream = upstream;
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response)
        throws IOException {
      byte[] body = request.getInputStream().readAllBytes();
      HttpResponse<InputStream> upstreamResponse;
      try {
        upstreamResponse = upstream.forward(request.getRequestURI(), body);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        response.sendError(503);
        return;
      }
      String contentType = Upstream.contentType(upstreamResponse);
      response.setStatus(upstreamResponse.statusCode());
      response.setContentType(contentType);
      if (!Upstream.isEventStream(contentType)) {
        try (InputStream in = upstreamResponse.body()) {
          byte[] all = in.readAllBytes();
          response.setContentLength(all.length);
          response.getOutputStream().write(all);
        }
        return;
      }
      AsyncContext async = request.startAsync();
      relays.execute(
          () -> {
            try (InputStream in = upstreamResponse.body()) {
              ServletOutputStream out = async.getResponse().getOutputStream();
              byte[] buffer = new byte[8192];
              for (int n; (n = in.read(buffer)) >= 0; ) {
                out.write(buffer, 0, n);
                out.flush();
              }
            } catch (IOException e) {
              e.printStackTrace();
            } finally {
              async.complete();
            }
          });
    }
  }
}
