package dev.llmlat.agent.bench;

import dev.llmlat.agent.gatewayapp.JdkGatewayMain;
import dev.llmlat.agent.it.FakeEngine;
import dev.llmlat.agent.it.GatewayClient;
import dev.llmlat.agent.it.GatewayProcess;
import dev.llmlat.agent.it.TestBroker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Gateway request latency (p50/p99, full streamed response as the client reads it) and throughput
 * with no agent, the vanilla agent, the agent + this extension + the Kafka exporter with the
 * broker up, and the same with the broker down, in one run; prints ratios. The target: the
 * extension adds under 5% to the vanilla agent's p50, and a down broker adds nothing measurable.
 *
 * <p>Run from the module directory after {@code mvn verify}: {@code java -cp
 * target/test-classes:$(cat target/test-classpath.txt) dev.llmlat.agent.bench.AgentOverheadBenchmark
 * [requests] [warmup] [concurrency]} (defaults 1500 400 4).
 */
public final class AgentOverheadBenchmark {
  /** One mode's figures. */
  record Figures(String mode, double p50Ms, double p99Ms, double requestsPerSecond) {}

  private AgentOverheadBenchmark() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("llmlat.gateway.fullJit", "true");
    System.setProperty("sun.net.httpserver.nodelay", "true"); // the in-process engine, before it starts
    int requests = args.length > 0 ? Integer.parseInt(args[0]) : 1500;
    int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 400;
    int concurrency = args.length > 2 ? Integer.parseInt(args[2]) : 4;
    TestBroker broker = TestBroker.shared();
    broker.ensureRunning();
    String downBroker = "127.0.0.1:" + freePort();
    Map<String, List<String>> modes = new LinkedHashMap<>();
    modes.put("no agent", List.of());
    modes.put("vanilla agent", GatewayProcess.vanillaAgent("none"));
    List<String> extensionOnly = GatewayProcess.extensionWithKafka(broker.bootstrapServers());
    extensionOnly.set(extensionOnly.indexOf("-Dotel.traces.exporter=kafka"), "-Dotel.traces.exporter=none");
    modes.put("agent+extension, no exporter", extensionOnly);
    modes.put("agent+extension+kafka", GatewayProcess.extensionWithKafka(broker.bootstrapServers()));
    modes.put("agent+extension, kafka down", GatewayProcess.extensionWithKafka(downBroker));
    List<Figures> results = new ArrayList<>();
    try (FakeEngine engine = new FakeEngine(4, 0, 0)) {
      for (Map.Entry<String, List<String>> mode : modes.entrySet()) {
        try (GatewayProcess gateway = GatewayProcess.start(GatewayProcess.currentJava(), JdkGatewayMain.class,
            mode.getValue(), engine.baseUrl())) {
          run(gateway, warmup, concurrency);
          Figures f = measure(mode.getKey(), gateway, requests, concurrency);
          results.add(f);
          System.out.printf("%-30s p50 %7.3f ms  p99 %7.3f ms  %8.1f req/s%n", f.mode(), f.p50Ms(), f.p99Ms(), f.requestsPerSecond());
        }
      }
    } finally {
      broker.stop();
    }
    Figures none = results.get(0);
    Figures vanilla = results.get(1);
    Figures hooks = results.get(2);
    Figures ext = results.get(3);
    Figures down = results.get(4);
    System.out.printf("%nvanilla agent / no agent        p50 x%.3f  p99 x%.3f  throughput x%.3f%n",
        vanilla.p50Ms() / none.p50Ms(), vanilla.p99Ms() / none.p99Ms(), vanilla.requestsPerSecond() / none.requestsPerSecond());
    System.out.printf("extension hooks / vanilla       p50 x%.3f  p99 x%.3f  throughput x%.3f  (request path only)%n",
        hooks.p50Ms() / vanilla.p50Ms(), hooks.p99Ms() / vanilla.p99Ms(), hooks.requestsPerSecond() / vanilla.requestsPerSecond());
    System.out.printf("extension+kafka / vanilla       p50 x%.3f  p99 x%.3f  throughput x%.3f  (target p50 < x1.05)%n",
        ext.p50Ms() / vanilla.p50Ms(), ext.p99Ms() / vanilla.p99Ms(), ext.requestsPerSecond() / vanilla.requestsPerSecond());
    System.out.printf("kafka down / kafka up           p50 x%.3f  p99 x%.3f  throughput x%.3f%n",
        down.p50Ms() / ext.p50Ms(), down.p99Ms() / ext.p99Ms(), down.requestsPerSecond() / ext.requestsPerSecond());
  }

  private static long[] run(GatewayProcess gateway, int requests, int concurrency) throws Exception {
    long[] latencies = new long[requests];
    AtomicInteger next = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < concurrency; t++) {
        workers.add(pool.submit(() -> {
          GatewayClient client = new GatewayClient();
          String body = GatewayClient.chatBody(true, 32);
          for (int i; (i = next.getAndIncrement()) < requests; ) {
            GatewayClient.Result r = client.post(gateway.baseUrl(), "/v1/chat/completions", body);
            if (r.status() != 200) {
              throw new IllegalStateException("status " + r.status());
            }
            latencies[i] = r.latencyNanos();
          }
          return null;
        }));
      }
      for (Future<?> w : workers) {
        w.get();
      }
    } finally {
      pool.shutdownNow();
    }
    return latencies;
  }

  private static Figures measure(String mode, GatewayProcess gateway, int requests, int concurrency) throws Exception {
    long start = System.nanoTime();
    long[] latencies = run(gateway, requests, concurrency);
    double seconds = (System.nanoTime() - start) / 1e9;
    Arrays.sort(latencies);
    return new Figures(mode, latencies[requests / 2] / 1e6, latencies[(int) Math.min(requests - 1, Math.ceil(requests * 0.99) - 1)] / 1e6,
        requests / seconds);
  }

  private static int freePort() throws java.io.IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
