package dev.llmlat.engine;

import com.sun.net.httpserver.HttpServer;
import dev.llmlat.enginetelemetry.EngineTelemetry;
import dev.llmlat.otlpkafka.KafkaSpanExporter;
import dev.llmlat.otlpkafka.KafkaSpanExporterBuilder;
import dev.llmlat.scheduler.SchedulerTracer;
import io.opentelemetry.exporter.logging.LoggingSpanExporter;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The demo engine: an OpenAI-compatible HTTP server on the JDK's {@link HttpServer} in front of a
 * {@link ContinuousBatchingScheduler}, traced with the scheduler SDK (engine layer) plus modelled
 * GPU step spans (gpu layer). {@link #start} binds and starts everything; {@link #close} stops
 * serving, fails requests still in flight, and flushes spans.
 */
public final class DemoEngine implements AutoCloseable {
  private final EngineConfig config;
  private final EngineTelemetry telemetry;
  private final ContinuousBatchingScheduler scheduler;
  private final HttpServer server;
  private final ExecutorService handlers;

  private DemoEngine(
      EngineConfig config,
      EngineTelemetry telemetry,
      ContinuousBatchingScheduler scheduler,
      HttpServer server,
      ExecutorService handlers) {
    this.config = config;
    this.telemetry = telemetry;
    this.scheduler = scheduler;
    this.server = server;
    this.handlers = handlers;
  }

  /** Starts with the exporter the configuration names. */
  public static DemoEngine start(EngineConfig config) throws IOException {
    return start(config, exporterFor(config));
  }

  /** The exporter the configuration names. */
  static SpanExporter exporterFor(EngineConfig config) {
    switch (config.exporter()) {
      case KAFKA:
        KafkaSpanExporterBuilder kafka =
            KafkaSpanExporter.builder()
                .setBootstrapServers(config.kafkaBootstrap())
                .setTopic(config.topic())
                .setCompression("zstd");
        config.kafkaProperties().forEach(kafka::putProducerProperty);
        return kafka.build();
      case LOGGING:
        return LoggingSpanExporter.create();
      default:
        return SpanExporter.composite(); // drops everything
    }
  }

  /** Starts with {@code exporter} (tests: an in-memory one); the engine shuts it down on close. */
  public static DemoEngine start(EngineConfig config, SpanExporter exporter) throws IOException {
    MonotonicClock clock = new MonotonicClock();
    EngineTelemetry telemetry =
        EngineTelemetry.builder(config.serviceName()).setExporter(exporter).build();
    SchedulerTracer tracer = SchedulerTracer.builder(telemetry.engine()).setClock(clock).build();
    ContinuousBatchingScheduler scheduler =
        new ContinuousBatchingScheduler(
            config,
            tracer,
            new GpuStepRecorder(telemetry.gpuTracer("dev.llmlat.engine.gpu")),
            clock);
    // One thread per open stream; streams last as long as their requests.
    ExecutorService handlers =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "llmlat-http");
              t.setDaemon(true);
              return t;
            });
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(config.host(), config.port()), 128);
    } catch (IOException e) {
      telemetry.close();
      throw new IOException(
          "cannot listen on " + config.host() + ":" + config.port() + ": " + e.getMessage(), e);
    }
    server.setExecutor(handlers);
    server.createContext(
        "/v1/chat/completions", new ChatCompletionsHandler(config, scheduler, clock));
    server.createContext(
        "/v1/completions", ChatCompletionsHandler.completions(config, scheduler, clock));
    server.createContext(
        "/health",
        exchange -> {
          byte[] ok = "ok\n".getBytes(StandardCharsets.US_ASCII);
          exchange.sendResponseHeaders(200, ok.length);
          exchange.getResponseBody().write(ok);
          exchange.close();
        });
    server.createContext(
        "/v1/models",
        exchange -> {
          byte[] body =
              ("{\"object\":\"list\",\"data\":[{\"id\":\""
                      + config.model()
                      + "\",\"object\":\"model\",\"owned_by\":\"llmlat\"}]}")
                  .getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().set("Content-Type", "application/json");
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    scheduler.start();
    server.start();
    return new DemoEngine(config, telemetry, scheduler, server, handlers);
  }

  public int port() {
    return server.getAddress().getPort();
  }

  public URI baseUri() {
    return URI.create("http://" + config.host() + ":" + port());
  }

  public EngineConfig config() {
    return config;
  }

  /**
   * Steps run, the largest batch, running set, KV blocks in use and step tokens, preemptions and
   * finished requests so far.
   */
  public String statsLine() {
    ContinuousBatchingScheduler.Stats s = scheduler.stats();
    return "steps="
        + s.steps()
        + " max_batch="
        + s.maxBatchSize()
        + " max_running="
        + s.maxRunning()
        + " max_kv_blocks="
        + s.maxKvBlocksUsed()
        + " max_step_tokens="
        + s.maxStepTokens()
        + " preemptions="
        + s.preemptions()
        + " finished="
        + s.finished();
  }

  ContinuousBatchingScheduler.Stats stats() {
    return scheduler.stats();
  }

  /** Exports every span ended so far; true when done within {@code timeout}. */
  public boolean flushSpans(Duration timeout) {
    return telemetry.flush(timeout);
  }

  @Override
  public void close() {
    server.stop(0);
    scheduler.close();
    handlers.shutdown();
    try {
      handlers.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    telemetry.close();
  }
}
