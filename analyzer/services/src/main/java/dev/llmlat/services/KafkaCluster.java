package dev.llmlat.services;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * A Kafka cluster of several KRaft nodes on loopback, each a {@link KafkaBroker} child JVM that is
 * broker and controller, with its own data directory ({@code node-<id>/} under the cluster's),
 * ports and log file; the controller quorum is all of them (static {@code
 * controller.quorum.voters}). The cluster's topics, its internal ones and those created without a
 * replication factor, are replicated to every node, a write acknowledged by {@code acks=all} once
 * {@code minInsyncReplicas} of them have it. Node ids are 1..n.
 */
public final class KafkaCluster implements AutoCloseable {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

  private final Path dir;
  private final List<KafkaBroker> nodes;

  private KafkaCluster(Path dir, List<KafkaBroker> nodes) {
    this.dir = dir;
    this.nodes = List.copyOf(nodes);
  }

  /**
   * Formats and starts {@code nodeCount} nodes under {@code dir}; returns once every one is in the
   * cluster.
   */
  public static KafkaCluster start(Path dir, int nodeCount, int minInsyncReplicas)
      throws IOException {
    if (nodeCount < 1 || nodeCount > 9) {
      throw new IllegalArgumentException(
          "a local Kafka cluster has 1 to 9 nodes, got " + nodeCount);
    }
    if (minInsyncReplicas < 1 || minInsyncReplicas > nodeCount) {
      throw new IllegalArgumentException(
          "min.insync.replicas must be 1 to the node count ("
              + nodeCount
              + "), got "
              + minInsyncReplicas);
    }
    int[] ports = distinctFreePorts(2 * nodeCount);
    StringBuilder voters = new StringBuilder();
    for (int id = 1; id <= nodeCount; id++) {
      voters
          .append(id == 1 ? "" : ",")
          .append(id)
          .append("@127.0.0.1:")
          .append(ports[2 * (id - 1) + 1]);
    }
    String clusterId = Uuid.randomUuid().toString();
    // all launched (each formatting its directory, a JVM of its own) at once, before any is waited
    // for: a node answers once a majority of the quorum runs
    List<Future<KafkaBroker>> launches = new ArrayList<>();
    try (ExecutorService launching = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int id = 1; id <= nodeCount; id++) {
        Path nodeDir = dir.resolve("node-" + id);
        KafkaBroker.Config config =
            KafkaBroker.Config.under(nodeDir.resolve("data"), nodeDir, nodeDir, 0, 0);
        KafkaBroker.Quorum quorum =
            new KafkaBroker.Quorum(id, voters.toString(), clusterId, nodeCount, minInsyncReplicas);
        int port = ports[2 * (id - 1)];
        int controllerPort = ports[2 * (id - 1) + 1];
        launches.add(
            launching.submit(() -> KafkaBroker.launch(config, port, controllerPort, quorum)));
      }
    }
    List<KafkaBroker> nodes = new ArrayList<>();
    Throwable failed = null;
    for (Future<KafkaBroker> launch : launches) {
      try {
        nodes.add(launch.get());
      } catch (ExecutionException e) {
        failed = failed == null ? e.getCause() : failed;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failed = failed == null ? e : failed;
      }
    }
    try {
      if (failed instanceof IOException io) {
        throw io;
      } else if (failed != null) {
        throw new IllegalStateException("a Kafka node did not start: " + failed, failed);
      }
      for (KafkaBroker node : nodes) {
        node.awaitStarted();
      }
      KafkaCluster cluster = new KafkaCluster(dir, nodes);
      cluster.awaitAllRegistered();
      return cluster;
    } catch (IOException | RuntimeException e) {
      nodes.forEach(KafkaBroker::kill);
      throw e;
    }
  }

  /** Every node's address, as clients' {@code bootstrap.servers}. */
  public String bootstrapServers() {
    return nodes.stream().map(KafkaBroker::bootstrapServers).collect(Collectors.joining(","));
  }

  public List<KafkaBroker> nodes() {
    return nodes;
  }

  /** The node with this id (1..n). */
  public KafkaBroker node(int id) {
    if (id < 1 || id > nodes.size()) {
      throw new IllegalArgumentException(
          "this cluster's node ids are 1.." + nodes.size() + ", got " + id);
    }
    return nodes.get(id - 1);
  }

  /**
   * Stops every node still running, all at once: one by one, the last would wait out its timeout
   * for a controller quorum that the others took with them.
   */
  @Override
  public void close() {
    List<Thread> stopping =
        nodes.stream()
            .filter(KafkaBroker::isAlive)
            .map(
                node ->
                    Thread.ofPlatform()
                        .name("kafka-stop-" + node.pid())
                        .start(() -> node.stop(Duration.ofSeconds(20))))
            .toList();
    try {
      for (Thread t : stopping) {
        t.join();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      nodes.forEach(KafkaBroker::kill);
    }
  }

  private void awaitAllRegistered() {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    int seen = 0;
    try (Admin admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
                2000,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                3000))) {
      while (System.nanoTime() < deadline) {
        try {
          seen = admin.describeCluster().nodes().get(3, TimeUnit.SECONDS).size();
          if (seen == nodes.size()) {
            return;
          }
        } catch (Exception e) {
          // not answering yet
        }
        Thread.sleep(100);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting the Kafka cluster", e);
    }
    throw new IllegalStateException(
        "only "
            + seen
            + " of "
            + nodes.size()
            + " Kafka nodes joined the cluster within "
            + READY_TIMEOUT.toSeconds()
            + " s; see their logs under "
            + nodes.getFirst().logDir().getParent().getParent());
  }

  private static int[] distinctFreePorts(int n) throws IOException {
    Set<Integer> ports = new LinkedHashSet<>();
    while (ports.size() < n) {
      ports.add(KafkaBroker.freePort());
    }
    return ports.stream().mapToInt(Integer::intValue).toArray();
  }
}
