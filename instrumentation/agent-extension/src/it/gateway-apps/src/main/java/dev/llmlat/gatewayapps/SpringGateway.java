package dev.llmlat.gatewayapps;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Spring Cloud Gateway configured as its users configure it: one route, {@code /v1/**} to the
 * engine, in properties (both the WebFlux and the Server MVC names: each app reads its own).
 * Args: engine base URL, then any further properties as {@code name=value} (e.g. the HTTP client's
 * pool). Prints {@code LISTENING <port>} once it serves.
 */
@SpringBootApplication
public class SpringGateway {
  public static void main(String[] args) {
    Map<String, Object> properties = new LinkedHashMap<>();
    properties.put("server.address", "127.0.0.1");
    properties.put("server.port", "0");
    properties.put("spring.main.banner-mode", "off");
    properties.put("logging.level.root", "warn");
    for (String flavour : new String[] {"webflux", "webmvc"}) {
      String route = "spring.cloud.gateway.server." + flavour + ".routes[0].";
      properties.put(route + "id", "engine");
      properties.put(route + "uri", args[0]);
      properties.put(route + "predicates[0]", "Path=/v1/**");
    }
    for (int i = 1; i < args.length; i++) {
      int equals = args[i].indexOf('=');
      if (equals <= 0) {
        throw new IllegalArgumentException("argument " + (i + 1) + " is not name=value: " + args[i]);
      }
      properties.put(args[i].substring(0, equals), args[i].substring(equals + 1));
    }
    SpringApplication app = new SpringApplication(SpringGateway.class);
    app.setDefaultProperties(properties);
    ConfigurableApplicationContext context = app.run();
    System.out.println("LISTENING " + context.getEnvironment().getProperty("local.server.port"));
  }
}
