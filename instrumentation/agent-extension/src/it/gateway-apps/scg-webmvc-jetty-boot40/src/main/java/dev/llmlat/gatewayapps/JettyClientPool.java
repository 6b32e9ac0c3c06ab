package dev.llmlat.gatewayapps;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.client.ClientHttpRequestFactory;

/**
 * The gateway's Jetty HttpClient with a pool of its own size, as a user caps the connections to
 * their engine: Spring's Jetty request factory, built as Spring Boot builds it, with {@code
 * llmlat.gateway.jetty-client.max-connections} connections per destination. Spring Cloud Gateway
 * Server MVC proxies through the request factory it finds.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty("llmlat.gateway.jetty-client.max-connections")
class JettyClientPool {
  @Bean
  ClientHttpRequestFactory gatewayRequestFactory(Environment environment) {
    int max =
        environment.getRequiredProperty(
            "llmlat.gateway.jetty-client.max-connections", Integer.class);
    return ClientHttpRequestFactoryBuilder.jetty()
        .withHttpClientCustomizer(client -> client.setMaxConnectionsPerDestination(max))
        .build();
  }
}
