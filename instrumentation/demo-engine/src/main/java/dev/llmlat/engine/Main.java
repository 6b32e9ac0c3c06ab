package dev.llmlat.engine;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CountDownLatch;

/**
 * {@code java dev.llmlat.engine.Main [flags]}: runs the demo engine until SIGTERM/SIGINT. See
 * {@link #USAGE}.
 */
public final class Main {
  static final String USAGE =
      String.join(
          "\n",
          "usage: demo-engine [flags]",
          "  --host ADDR                    bind address (127.0.0.1)",
          "  --port N                       HTTP port, 0 = any free (8000)",
          "  --model NAME                   model name served (tinylm)",
          "  --service-name NAME            service.name of the spans (llm-engine)",
          "  --max-num-seqs N               most requests running at once (8)",
          "  --max-num-batched-tokens N     most tokens one step computes: prefill tokens + one per decode (8192)",
          "  --block-size N                 tokens per KV block (16)",
          "  --num-gpu-blocks N             KV blocks; when decodes need more, requests are preempted (2048)",
          "  --enable-chunked-prefill       chunk prompts within the token budget, decodes first (off: prefill-first)",
          "  --time-scale X                 wall time per modelled time; 0.1 = 10x faster (1.0)",
          "  --default-max-tokens N         output tokens when a request names none (16)",
          "  --exporter kafka|logging|none  span destination (kafka when --kafka-bootstrap is given, else logging)",
          "  --kafka-bootstrap HOST:PORT    Kafka bootstrap servers",
          "  --topic NAME                   span topic (otlp_spans)");

  private Main() {}

  public static void main(String[] args) throws Exception {
    EngineConfig config;
    try {
      config = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("demo-engine: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    DemoEngine engine = DemoEngine.start(config);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  engine.close();
                  System.err.println("demo-engine stopped: " + engine.statsLine());
                  stopped.countDown();
                },
                "llmlat-shutdown"));
    System.out.println(
        "demo-engine listening on "
            + engine.baseUri()
            + " model="
            + config.model()
            + " max_num_seqs="
            + config.limits().maxNumSeqs()
            + " max_num_batched_tokens="
            + config.limits().maxNumBatchedTokens()
            + " block_size="
            + config.limits().kvBlockSize()
            + " num_gpu_blocks="
            + config.limits().kvBlocks()
            + " chunked_prefill="
            + config.chunkedPrefill()
            + " time_scale="
            + config.timeScale()
            + " exporter="
            + config.exporter().name().toLowerCase(java.util.Locale.ROOT));
    stopped.await();
  }

  /**
   * Flags to a validated configuration; throws {@link IllegalArgumentException} naming the bad
   * flag.
   */
  static EngineConfig parse(String... args) {
    EngineConfig.Builder b = EngineConfig.builder();
    Deque<String> rest = new ArrayDeque<>(java.util.List.of(args));
    String exporter = null;
    String bootstrap = null;
    while (!rest.isEmpty()) {
      String flag = rest.poll();
      String value;
      int eq = flag.indexOf('=');
      if (flag.startsWith("--") && eq > 0) {
        value = flag.substring(eq + 1);
        flag = flag.substring(0, eq);
      } else {
        if (flag.equals("--help") || flag.equals("-h")) {
          throw new IllegalArgumentException("help requested");
        }
        if (flag.equals("--enable-chunked-prefill")) {
          b.chunkedPrefill(true);
          continue;
        }
        value = rest.poll();
        if (value == null) {
          throw new IllegalArgumentException(flag + " needs a value");
        }
      }
      switch (flag) {
        case "--host":
          b.host(value);
          break;
        case "--port":
          b.port(integer(flag, value));
          break;
        case "--model":
          b.model(value);
          break;
        case "--service-name":
          b.serviceName(value);
          break;
        case "--max-num-seqs":
          b.maxNumSeqs(integer(flag, value));
          break;
        case "--max-num-batched-tokens":
          b.maxNumBatchedTokens(integer(flag, value));
          break;
        case "--block-size":
          b.kvBlockSize(integer(flag, value));
          break;
        case "--num-gpu-blocks":
          b.kvBlocks(integer(flag, value));
          break;
        case "--time-scale":
          b.timeScale(decimal(flag, value));
          break;
        case "--default-max-tokens":
          b.defaultMaxTokens(integer(flag, value));
          break;
        case "--exporter":
          exporter = value;
          break;
        case "--kafka-bootstrap":
          bootstrap = value;
          b.kafkaBootstrap(value);
          break;
        case "--topic":
          b.topic(value);
          break;
        default:
          throw new IllegalArgumentException("unknown flag " + flag);
      }
    }
    b.exporter(
        exporter != null
            ? ExporterKind.parse(exporter)
            : bootstrap != null ? ExporterKind.KAFKA : ExporterKind.LOGGING);
    return b.build();
  }

  private static int integer(String flag, String value) {
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " takes an integer, got '" + value + "'");
    }
  }

  private static double decimal(String flag, String value) {
    try {
      return Double.parseDouble(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " takes a number, got '" + value + "'");
    }
  }
}
