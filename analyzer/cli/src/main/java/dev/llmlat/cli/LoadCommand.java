package dev.llmlat.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.load.ByteSize;
import dev.llmlat.load.DatasetPrompts;
import dev.llmlat.load.Endpoint;
import dev.llmlat.load.Failure;
import dev.llmlat.load.LoadConfig;
import dev.llmlat.load.LoadResult;
import dev.llmlat.load.LoadRun;
import dev.llmlat.load.LoadShape;
import dev.llmlat.load.PromptSource;
import dev.llmlat.load.ResultFile;
import dev.llmlat.load.ServedModels;
import dev.llmlat.load.ServingMetrics;
import dev.llmlat.load.Slo;
import dev.llmlat.load.SpanShipper;
import dev.llmlat.load.SummaryText;
import dev.llmlat.load.SyntheticPrompts;
import dev.llmlat.load.Target;
import dev.llmlat.load.sweep.SweepConfig;
import dev.llmlat.otlpkafka.SpanPublisher;
import dev.llmlat.runtime.process.ExitSequence;
import dev.llmlat.runtime.process.Interrupts;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.StoreConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
    name = "load",
    mixinStandardHelpOptions = true,
    description = {
      "Streams OpenAI-compatible completions at a server; sums up as vLLM's benchmark.",
      "Each request carries a W3C traceparent and becomes a CLIENT span (layer client),",
      "so the client's TTFT joins the gateway's and the engine's traces.",
      "Arrivals: --rate R, --rate R --poisson, or --concurrency N (closed loop).",
      "How much: --requests N and/or --duration 60s. Prompts: --dataset or synthetic.",
      "A sweep: --sweep-rate 1,2,4,8 (or --sweep-concurrency) runs each level for --duration,",
      "finds the knee (the highest level meeting --slo-ttft/--slo-tpot), and, where the",
      "spans reach a store, each TTFT component's share per level (--html draws it).",
      "Ctrl-C stops sending, gives requests in flight 5 s, sums up what finished."
    })
final class LoadCommand implements Callable<Integer> {
  /** How long requests in flight may still finish after Ctrl-C. */
  private static final Duration GRACE = Duration.ofSeconds(5);

  @Parameters(
      paramLabel = "URL",
      description =
          "The server (http://host:8000, .../v1) or the endpoint itself (.../v1/chat/completions, .../v1/completions).")
  String url;

  @Option(
      names = "--endpoint",
      paramLabel = "chat|completions",
      description =
          "The API: /v1/chat/completions or /v1/completions. Default: the URL's, else chat.")
  String endpoint;

  @Option(
      names = "--model",
      paramLabel = "NAME",
      description =
          "The model of every request. Default: the first the server lists at /v1/models.")
  String model;

  @Option(
      names = "--api-key",
      paramLabel = "KEY",
      defaultValue = "${env:OPENAI_API_KEY}",
      description =
          "Sent as a bearer token; prefer the env variable OPENAI_API_KEY (flags show in ps). Never printed.")
  String apiKey;

  @Option(
      names = "--rate",
      paramLabel = "R",
      description = "Requests per second, open loop (constant gaps unless --poisson).")
  Double rate;

  @Option(
      names = "--poisson",
      description = "Exponential gaps with mean 1/R (a Poisson process), seeded by --seed.")
  boolean poisson;

  @Option(
      names = "--concurrency",
      paramLabel = "N",
      description = "A closed loop of N clients, each sending when its last request ended.")
  Integer concurrency;

  @Option(
      names = "--max-concurrency",
      paramLabel = "N",
      description =
          "With --rate: the most requests in flight; a request due while all are busy waits (its client queue time). Default: 256.")
  Integer maxConcurrency;

  @Option(
      names = "--requests",
      paramLabel = "N",
      description = "Measured requests to send. Default: 100 (without --duration).")
  Integer requests;

  @Option(
      names = "--duration",
      paramLabel = "DURATION",
      description = "Send for this long (e.g. 60s, 5m); with --requests, whichever ends first.")
  String duration;

  @Option(
      names = "--warmup",
      paramLabel = "N",
      defaultValue = "0",
      description =
          "Requests sent first, not measured and not traced (their traceparent is unsampled). Default: ${DEFAULT-VALUE}.")
  int warmup;

  @Option(
      names = "--dataset",
      paramLabel = "FILE",
      description =
          "Prompts from FILE, in order, cycling: ShareGPT JSON (the first human turn; the first gpt turn's length"
              + " as output tokens) or JSONL lines {\"prompt\": \"...\", \"output_tokens\": N}.")
  Path dataset;

  @Option(
      names = "--input-len",
      paramLabel = "TOKENS",
      description =
          "Synthetic prompts: mean length in tokens (one common word each). Default: 1024.")
  Integer inputLen;

  @Option(
      names = "--input-len-stddev",
      paramLabel = "TOKENS",
      defaultValue = "0",
      description =
          "Synthetic prompts: standard deviation of the length (normal, at least 1). Default: ${DEFAULT-VALUE}.")
  double inputLenStddev;

  @Option(
      names = "--output-len",
      paramLabel = "TOKENS",
      description = "Synthetic prompts: mean max_tokens. Default: 128.")
  Integer outputLen;

  @Option(
      names = "--output-len-stddev",
      paramLabel = "TOKENS",
      defaultValue = "0",
      description =
          "Synthetic prompts: standard deviation of max_tokens. Default: ${DEFAULT-VALUE}.")
  double outputLenStddev;

  @Option(
      names = "--ignore-eos",
      negatable = true,
      description =
          "Send ignore_eos (vLLM, SGLang) so the server generates all max_tokens. Default: on for synthetic prompts, off for a dataset.")
  Boolean ignoreEos;

  @Option(
      names = "--seed",
      paramLabel = "N",
      defaultValue = "0",
      description = "Seeds Poisson arrivals and synthetic prompts. Default: ${DEFAULT-VALUE}.")
  long seed;

  @Option(
      names = "--timeout",
      paramLabel = "DURATION",
      defaultValue = "5m",
      description = "The most one request may take, sent to last byte. Default: ${DEFAULT-VALUE}.")
  String timeout;

  @Option(
      names = "--max-line",
      paramLabel = "SIZE",
      defaultValue = "16MiB",
      description =
          "The longest server-sent event line (and event) a response may carry; longer fails the request"
              + " as bad stream, and no more of it is read. Default: ${DEFAULT-VALUE}.")
  String maxLine;

  @Option(names = "--slo-ttft", paramLabel = "MS", description = "Goodput: TTFT objective in ms.")
  Double sloTtft;

  @Option(
      names = "--slo-tpot",
      paramLabel = "MS",
      description = "Goodput: time-per-output-token objective in ms.")
  Double sloTpot;

  @Option(
      names = "--save-result",
      paramLabel = "FILE",
      description = {
        "Write the result as JSON with the keys of vLLM's benchmark result file.",
        "A sweep's: {\"results\": [one such result per point], \"llmlat_sweep\": the summary}, rewritten after each point."
      })
  Path saveResult;

  @Option(
      names = "--sweep-rate",
      paramLabel = "R1,R2,...",
      description =
          "A sweep of open-loop rates (req/s), rising, each for --duration (constant gaps unless --poisson).")
  String sweepRate;

  @Option(
      names = "--sweep-concurrency",
      paramLabel = "N1,N2,...",
      description = "A sweep of closed loops of N clients, rising, each for --duration.")
  String sweepConcurrency;

  @Option(
      names = "--slo-target",
      paramLabel = "PERCENT",
      description =
          "A sweep: the share of requests that must meet every SLO for a level to meet it (the knee). Default: 90.")
  Double sloTarget;

  @Option(
      names = "--html",
      paramLabel = "FILE",
      description =
          "A sweep: write a self-contained HTML page (throughput-latency curve, goodput, TTFT components against load), rewritten after each point.")
  Path html;

  @Option(
      names = "--components-wait",
      paramLabel = "DURATION",
      defaultValue = "30s",
      description = {
        "A sweep: after each point, wait this long at most for its requests' engine spans to reach the store, attribute",
        "them and read their TTFT components (with --to store, or Kafka while `llmlat services up` ingests). 0s: do not. Default: ${DEFAULT-VALUE}."
      })
  String componentsWait;

  @Option(
      names = "--tenant",
      paramLabel = "NAME",
      description =
          "Send the requests for this tenant: the x-tenant-id header (the gateway extension reads it with"
              + " otel.instrumentation.llmlat.tenant.source=header) and llmlat.tenant on the client spans.")
  String tenant;

  @Option(
      names = "--service",
      paramLabel = "NAME",
      defaultValue = "llmlat-load",
      description = "service.name of the client spans. Default: ${DEFAULT-VALUE}.")
  String service;

  @Option(
      names = "--to",
      paramLabel = "kafka|store",
      description = "Where the spans go: kafka (the span topic) or store. Default: kafka.")
  ImportCommand.Destination to;

  @Option(
      names = "--topic",
      paramLabel = "TOPIC",
      defaultValue = LlmlatTopics.SPANS,
      description = "The span topic. Default: ${DEFAULT-VALUE}.")
  String topic;

  @Option(names = "--no-spans", description = "Record no spans (a plain benchmark).")
  boolean noSpans;

  @Mixin KafkaOptions kafka;
  @Mixin StoreOptions store;
  @Spec CommandSpec spec;

  @Override
  public Integer call() throws IOException, InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    SweepConfig.Axis axis = sweepAxis();
    // a sweep gives each point its shape; the base's is never run
    LoadShape shape = axis == null ? shape() : new LoadShape.Constant(1);
    PromptSource prompts = prompts();
    Duration requestTimeout = Durations.parse(timeout);
    Duration wait = Durations.parse(componentsWait);
    OutputFile resultFile =
        saveResult == null ? null : OutputFile.check("--save-result", saveResult);
    if (resultFile != null) {
      ResultFile.probe(
          "--save-result",
          resultFile.path()); // a file really created there, not just permission bits read
    }
    OutputFile htmlFile = html == null ? null : OutputFile.check("--html", html);
    if (htmlFile != null) {
      ResultFile.probe("--html", htmlFile.path());
    }
    long maxLineBytes = ByteSize.parse("--max-line", maxLine);
    if (noSpans && to != null) {
      throw new IllegalArgumentException("--no-spans records no spans: drop --to " + to);
    }
    Target target = Target.parse(url, endpoint == null ? null : endpoint(endpoint));
    String servedModel =
        model != null
            ? model
            : ServedModels.first(target, blankToNull(apiKey), Duration.ofSeconds(10));
    LoadConfig config =
        LoadConfig.builder(target, servedModel)
            .apiKey(blankToNull(apiKey))
            .shape(shape)
            .requests(requests != null ? requests : duration != null ? 0 : 100)
            .duration(duration == null ? null : Durations.parse(duration))
            .warmup(warmup)
            .maxConcurrency(maxConcurrency == null ? 256 : maxConcurrency)
            .timeout(requestTimeout)
            .ignoreEos(ignoreEos != null ? ignoreEos : dataset == null)
            .slo(new Slo(Slo.millis(sloTtft, "--slo-ttft"), Slo.millis(sloTpot, "--slo-tpot")))
            .serviceName(service)
            .maxLineBytes(maxLineBytes)
            .tenant(tenant)
            .build();
    if (axis != null) {
      SweepConfig sweep =
          new SweepConfig(
              config,
              axis,
              SweepConfig.parseLevels(
                  axis.option(), axis == SweepConfig.Axis.RATE ? sweepRate : sweepConcurrency),
              poisson,
              seed,
              (sloTarget == null ? 90 : sloTarget) / 100);
      return sweep(sweep, prompts, target, servedModel, resultFile, htmlFile, wait, out);
    }

    CountDownLatch reported = new CountDownLatch(1);
    SpanRoute route = null;
    SpanDestination spans = null;
    ExitSequence.Step atExit = null;
    try {
      route = noSpans ? null : open(to == null ? ImportCommand.Destination.kafka : to);
      spans = route == null ? null : route.next().get();
      out.printf(
          "load: %s, %s%s -> %s (model %s)%n",
          amount(config),
          shape,
          shape instanceof LoadShape.Closed
              ? ""
              : ", at most " + config.maxConcurrency() + " in flight",
          target.url(),
          servedModel);
      out.printf(
          "prompts: %s; spans: %s%n",
          prompts.description(), spans == null ? "none (--no-spans)" : spans.description());
      out.flush();
      SpanShipper shipper = spans == null ? null : new SpanShipper(spans.sink());
      try (LoadProgress progress = LoadProgress.start(config, spec.commandLine().getErr())) {
        LoadRun run = LoadRun.start(config, prompts, shipper, progress);
        // Ctrl-C: stop sending, give what is in flight a moment, then wait while this thread
        // reports
        // (and commits the spans) before the process ends
        atExit =
            ExitSequence.register(
                "stopping the load",
                () -> {
                  run.stop(GRACE);
                  awaitQuietly(reported, 60);
                },
                GRACE.toMillis() + 75_000);
        LoadResult result = run.await();
        progress.close();
        return report(result, spans, shipper, resultFile, out);
      }
    } finally {
      if (spans != null) {
        spans.close();
      }
      if (route != null) {
        route.close();
      }
      reported.countDown();
      if (atExit != null) {
        atExit.close();
      }
    }
  }

  private int report(
      LoadResult result,
      SpanDestination spans,
      SpanShipper shipper,
      OutputFile resultFile,
      PrintWriter out)
      throws IOException {
    PrintWriter err = spec.commandLine().getErr();
    String shipping = null;
    String notSaved = null;
    if (shipper != null) {
      shipper.close(30_000);
      try {
        spans.finish().run();
      } catch (RuntimeException e) {
        shipping = e.getMessage();
      }
      if (shipper.failure() != null) {
        shipping = shipper.failure().getMessage();
      }
    }
    if (result.warmupFailed()) {
      err.printf(
          "llmlat load: all %d warm-up requests failed (first: %s); nothing was measured%n",
          result.warmups(), result.warmupFailure());
      return Llmlat.EXIT_FAILURE;
    }
    ServingMetrics metrics = ServingMetrics.of(result);
    String signal = Interrupts.signal();
    if (!signal.isEmpty() || result.stopped()) {
      out.printf(
          "interrupted%s: the summary covers the %d requests that finished%s%n",
          signal.isEmpty() ? "" : " by " + signal,
          metrics.completed() + metrics.failed(),
          metrics.cancelled() > 0
              ? "; " + metrics.cancelled() + " cancelled in flight are not counted"
              : "");
    }
    SummaryText.print(result, metrics, out);
    if (shipper != null) {
      out.printf(
          "Spans: %,d client spans to %s%s%n",
          shipper.shipped(),
          spans.description(),
          shipper.dropped() > 0
              ? String.format(Locale.ROOT, "; %,d not shipped", shipper.dropped())
              : "");
    }
    if (resultFile != null) {
      ObjectNode json = ResultFile.of(result, metrics);
      if (shipper != null) {
        json.putObject("llmlat_spans")
            .put("destination", spans.description())
            .put("shipped", shipper.shipped())
            .put("dropped", shipper.dropped());
      }
      try {
        resultFile.write(o -> ResultFile.write(json, o));
        out.println("wrote " + resultFile.path());
      } catch (IOException | IllegalArgumentException e) {
        // checked before the run, yet failed now: the summary above is the run; say what was not
        // kept
        notSaved = e.getMessage();
      }
    }
    out.flush();
    if (notSaved != null) {
      err.println("llmlat load: the result was not saved (nothing was written): " + notSaved);
    }
    if (shipping != null) {
      err.println("llmlat load: spans were not all delivered: " + shipping);
    }
    if (!signal.isEmpty()) {
      return Interrupts.exitStatus();
    }
    List<Failure> internal = result.failures(Failure.Kind.INTERNAL);
    if (!internal.isEmpty()) {
      err.printf(
          "llmlat load: %d requests failed inside llmlat, not at the server (first: %s)%n",
          internal.size(), internal.getFirst());
      return Llmlat.EXIT_FAILURE;
    }
    if (metrics.completed() == 0 && metrics.failed() > 0) {
      err.printf("llmlat load: all %d requests failed (%s)%n", metrics.failed(), metrics.errors());
      return Llmlat.EXIT_FAILURE;
    }
    return shipping != null || notSaved != null || (shipper != null && shipper.dropped() > 0)
        ? Llmlat.EXIT_FAILURE
        : 0;
  }

  /** Runs a sweep: spans per point over one route, TTFT components from the store they reach. */
  private int sweep(
      SweepConfig sweep,
      PromptSource prompts,
      Target target,
      String servedModel,
      OutputFile resultFile,
      OutputFile htmlFile,
      Duration wait,
      PrintWriter out)
      throws InterruptedException {
    PrintWriter err = spec.commandLine().getErr();
    SpanRoute route = null;
    ClickHouseStore componentStore = null;
    boolean ownStore = false;
    try {
      route = noSpans ? null : open(to == null ? ImportCommand.Destination.kafka : to);
      String components;
      if (route == null || wait.isZero()) {
        components = "none (" + (route == null ? "--no-spans" : "--components-wait 0s") + ")";
      } else if (route.store() != null) {
        componentStore = route.store();
        components = "from " + componentStore.description();
      } else if (store.config().kind() == StoreConfig.Kind.SERVER) {
        // spans go to Kafka: a store server (or `services up`'s store process) is where an ingester
        // lands them
        try {
          componentStore = store.open();
          ownStore = true;
          components =
              "from " + componentStore.description() + " (the ingester lands the spans there)";
        } catch (RuntimeException e) {
          components = "none (the store could not be opened: " + e.getMessage() + ")";
        }
      } else {
        components =
            "none (spans go to Kafka and no store process runs to land them: `llmlat services up`, --clickhouse-url, or --to store)";
      }
      out.printf(
          "load sweep: %s %s, %s each%s -> %s (model %s)%n",
          sweep.axis().option(),
          String.join(",", sweep.levels().stream().map(SweepConfig::format).toList()),
          sweep.base().duration().toString().substring(2).toLowerCase(Locale.ROOT),
          sweep.axis() == SweepConfig.Axis.RATE
              ? ", at most " + sweep.base().maxConcurrency() + " in flight"
              : "",
          target.url(),
          servedModel);
      out.printf(
          "prompts: %s; spans: %s; TTFT components: %s%n",
          prompts.description(),
          route == null ? "none (--no-spans)" : route.description(),
          components);
      out.flush();
      return new LoadSweep(sweep, route, componentStore, wait, resultFile, htmlFile, out, err)
          .run(prompts);
    } finally {
      if (ownStore) {
        componentStore.close();
      }
      if (route != null) {
        route.close();
      }
    }
  }

  /** The sweep's axis, or null for a single run; the flags that cannot go with it refused. */
  private SweepConfig.Axis sweepAxis() {
    if (sweepRate != null && sweepConcurrency != null) {
      throw new IllegalArgumentException(
          "--sweep-rate and --sweep-concurrency exclude each other: a sweep raises one of them");
    }
    SweepConfig.Axis axis =
        sweepRate != null
            ? SweepConfig.Axis.RATE
            : sweepConcurrency != null ? SweepConfig.Axis.CONCURRENCY : null;
    if (axis == null) {
      for (Object[] sweepOnly : new Object[][] {{"--html", html}, {"--slo-target", sloTarget}}) {
        if (sweepOnly[1] != null) {
          throw new IllegalArgumentException(
              sweepOnly[0]
                  + " is for a sweep: add --sweep-rate R1,R2,... or --sweep-concurrency N1,N2,...");
        }
      }
      return null;
    }
    if (rate != null || concurrency != null) {
      throw new IllegalArgumentException(
          axis.option()
              + " gives each point's "
              + (axis == SweepConfig.Axis.RATE ? "rate" : "clients")
              + ": drop "
              + (rate != null ? "--rate" : "--concurrency"));
    }
    if (axis == SweepConfig.Axis.CONCURRENCY && maxConcurrency != null) {
      throw new IllegalArgumentException(
          "--max-concurrency bounds rates; each --sweep-concurrency point's clients are its bound");
    }
    if (sloTarget != null && !(sloTarget > 0 && sloTarget <= 100)) {
      throw new IllegalArgumentException(
          "--slo-target must be above 0 and at most 100 (percent), not " + sloTarget);
    }
    return axis;
  }

  private LoadShape shape() {
    if (rate != null && concurrency != null) {
      throw new IllegalArgumentException(
          "--rate (open loop) and --concurrency (closed loop) exclude each other; --max-concurrency bounds a rate");
    }
    if (rate == null && concurrency == null) {
      throw new IllegalArgumentException(
          "say how requests arrive: --rate R [--poisson], or --concurrency N");
    }
    if (concurrency != null) {
      if (poisson) {
        throw new IllegalArgumentException(
            "--poisson shapes a --rate; a closed loop (--concurrency) sends when a request ends");
      }
      if (maxConcurrency != null) {
        throw new IllegalArgumentException(
            "--max-concurrency bounds a --rate; a closed loop's --concurrency is its bound");
      }
      return new LoadShape.Closed(concurrency);
    }
    return poisson ? new LoadShape.Poisson(rate, seed) : new LoadShape.Constant(rate);
  }

  private PromptSource prompts() {
    if (requests != null && requests < 1) {
      throw new IllegalArgumentException("--requests must be at least 1, not " + requests);
    }
    if (dataset != null) {
      if (inputLen != null || outputLen != null || inputLenStddev != 0 || outputLenStddev != 0) {
        throw new IllegalArgumentException(
            "--input-len/--output-len describe synthetic prompts; --dataset "
                + dataset
                + " brings its own");
      }
      return DatasetPrompts.read(dataset);
    }
    return new SyntheticPrompts(
        length("--input-len", inputLen == null ? 1024 : inputLen, inputLenStddev),
        length("--output-len", outputLen == null ? 128 : outputLen, outputLenStddev),
        seed);
  }

  private static SyntheticPrompts.Length length(String option, int mean, double stddev) {
    try {
      return new SyntheticPrompts.Length(mean, stddev);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(option + " / " + option + "-stddev: " + e.getMessage(), e);
    }
  }

  private static Endpoint endpoint(String text) {
    return switch (text.strip().toLowerCase(Locale.ROOT)) {
      case "chat" -> Endpoint.CHAT;
      case "completions" -> Endpoint.COMPLETIONS;
      default ->
          throw new IllegalArgumentException(
              "--endpoint is chat or completions, not '" + Durations.abbreviate(text) + "'");
    };
  }

  private static String amount(LoadConfig config) {
    String n = config.requests() > 0 ? config.requests() + " requests" : "";
    String d =
        config.duration() == null
            ? ""
            : "for " + config.duration().toString().substring(2).toLowerCase(Locale.ROOT);
    return n.isEmpty() ? d : d.isEmpty() ? n : n + " (at most, " + d + ")";
  }

  /**
   * Where one run's spans go: a sink the shipper feeds, what makes them durable, and what to close
   * after.
   */
  record SpanDestination(
      dev.llmlat.otlpkafka.SpanSink sink,
      Runnable finish,
      AutoCloseable resource,
      String description) {
    void close() {
      try {
        resource.close();
      } catch (Exception e) {
        // closing after the report: what went wrong was reported by finish
      }
    }
  }

  /**
   * Where the command's spans go: a destination per run (a sweep's point) over one connection.
   *
   * @param store the store the spans go to; null for Kafka
   */
  record SpanRoute(
      java.util.function.Supplier<SpanDestination> next,
      AutoCloseable resource,
      String description,
      ClickHouseStore store) {
    void close() {
      try {
        resource.close();
      } catch (Exception e) {
        // closing after the report: what went wrong was reported by finish
      }
    }
  }

  private SpanRoute open(ImportCommand.Destination destination) {
    if (destination == ImportCommand.Destination.store) {
      ClickHouseStore s = store.openForWriting();
      return new SpanRoute(
          () -> {
            StoreImportTarget target =
                new StoreImportTarget(
                    s); // staged, moved into otel_traces at the end of the run: all or nothing
            return new SpanDestination(target, target::commit, target::close, s.description());
          },
          s::close,
          s.description(),
          s);
    }
    String bootstrap;
    try {
      bootstrap = kafka.required();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(e.getMessage() + "; or --to store, or --no-spans", e);
    }
    requireTopic(bootstrap);
    SpanPublisher publisher = new SpanPublisher(bootstrap, topic, null, kafka.clientProperties());
    String description = "Kafka " + bootstrap + " topic " + topic;
    return new SpanRoute(
        () -> new SpanDestination(publisher::publish, publisher::flush, () -> {}, description),
        publisher::close,
        description,
        null);
  }

  /**
   * Before any load: a topic that is not there would stall every batch (brokers usually do not
   * create topics).
   */
  private void requireTopic(String bootstrap) {
    try (Admin admin = kafka.clientProperties().admin(bootstrap)) {
      Set<String> topics = admin.listTopics().names().get(30, TimeUnit.SECONDS);
      if (!topics.contains(topic)) {
        throw new IllegalStateException(
            "Kafka at "
                + bootstrap
                + " has no topic "
                + topic
                + " (`llmlat services up` creates it; or --topic NAME, --to store, --no-spans)");
      }
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "Kafka at " + bootstrap + " did not list its topics: " + e.getCause().getMessage(),
          e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("Kafka at " + bootstrap + " did not answer within 30 s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(
          "interrupted while asking Kafka at " + bootstrap + " for its topics", e);
    }
  }

  private static void awaitQuietly(CountDownLatch latch, int seconds) {
    try {
      latch.await(seconds, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s;
  }
}
