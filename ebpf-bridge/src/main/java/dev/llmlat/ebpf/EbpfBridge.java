package dev.llmlat.ebpf;

import dev.llmlat.otlpkafka.SpanSink;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One bridge run: bpftrace with the generated probe program on a target, its JSON output turned
 * into OTLP spans for a {@link SpanSink}.
 *
 * <pre>{@code
 * try (EbpfBridge bridge = EbpfBridge.start(BridgeOptions.builder().pid(pid).build(), sink)) {
 *   BridgeSummary summary = bridge.awaitCompletion(Duration.ofMinutes(5)); // or close() to stop
 * }
 * }</pre>
 *
 * <p>Threads: one reads bpftrace's stdout into a queue, one drains stderr, one puts events in time
 * order ({@code ReorderBuffer}) and builds spans ({@code SpanAssembler}; the sink is called from
 * that one). {@link #close()} stops bpftrace and the command it launched (the whole process tree),
 * then delivers what was read.
 */
public final class EbpfBridge implements AutoCloseable {
  private static final String EOF = new String("<eof>"); // identity marker
  private static final int STDERR_TAIL = 4000;

  private final BridgeOptions options;
  private final Process bpftrace;
  private final Path programFile;
  private final Path fifo;
  private volatile boolean fifoOpened;
  private final ProbeProgram program;
  private final SpanAssembler assembler;
  private final ProbeOutputParser parser = new ProbeOutputParser();
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>(100_000);
  private final CountDownLatch attached = new CountDownLatch(1);
  private final CountDownLatch done = new CountDownLatch(1);
  private final StringBuilder stderr = new StringBuilder();
  private final List<ProcessHandle> targets = new ArrayList<>();
  private final Thread reader;
  private final Thread stderrReader;
  private final Thread processor;
  private volatile boolean stopping;
  private volatile int attachedProbes = -1;
  private volatile long malformed;
  private volatile long lost;
  private volatile RuntimeException failure;
  private BridgeSummary summary;

  private EbpfBridge(
      BridgeOptions options,
      SpanSink sink,
      ProbeProgram program,
      Path programFile,
      Path fifo,
      Process bpftrace) {
    this.options = options;
    this.fifo = fifo;
    this.program = program;
    this.programFile = programFile;
    this.bpftrace = bpftrace;
    this.assembler =
        new SpanAssembler(
            options,
            sink,
            new KernelSymbolizer(options.demangle()),
            ClockOffset.measure(),
            hostName());
    this.reader =
        Thread.ofPlatform().name("llmlat-ebpf-stdout").daemon().unstarted(this::readStdout);
    this.stderrReader =
        Thread.ofPlatform().name("llmlat-ebpf-stderr").daemon().unstarted(this::readStderr);
    this.processor =
        Thread.ofPlatform().name("llmlat-ebpf-spans").daemon().unstarted(this::process);
  }

  /**
   * Starts bpftrace and waits until its probes are attached (for a command: before it runs).
   *
   * @throws TargetProcessNotFoundException no process has the pid
   * @throws MissingProbeSymbolsException a library exports none of the probed functions
   * @throws BpfUnavailableException bpftrace is missing or the kernel refused the program
   * @throws EbpfBridgeException bpftrace failed to start for another reason (its stderr included)
   */
  public static EbpfBridge start(BridgeOptions options, SpanSink sink) {
    if (options.pid() > 0
        && ProcessHandle.of(options.pid()).filter(ProcessHandle::isAlive).isEmpty()) {
      throw new TargetProcessNotFoundException(options.pid());
    }
    ProbeProgram program = ProbeProgram.generate(LibraryDiscovery.discover(options));
    Path file;
    Path fifo;
    try {
      Path dir = Files.createTempDirectory("llmlat-ebpf-");
      file = dir.resolve("probes.bt");
      Files.writeString(file, program.text());
      // bpftrace writes its JSON into a named pipe: its stdout is the launched command's stdout.
      fifo = dir.resolve("events.fifo");
      Process mkfifo =
          new ProcessBuilder("mkfifo", "-m", "600", fifo.toString())
              .redirectErrorStream(true)
              .start();
      if (!mkfifo.waitFor(10, TimeUnit.SECONDS) || mkfifo.exitValue() != 0) {
        throw new IOException("mkfifo " + fifo + " failed");
      }
    } catch (IOException e) {
      throw new EbpfBridgeException("cannot write the probe program: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EbpfBridgeException("interrupted", e);
    }
    List<String> cmd =
        new ArrayList<>(
            List.of(options.bpftrace(), "-f", "json", "-B", "line", "-o", fifo.toString()));
    if (options.pid() > 0) {
      cmd.addAll(List.of("-p", Long.toString(options.pid())));
    } else {
      cmd.addAll(List.of("-c", options.command().orElseThrow()));
    }
    cmd.add(file.toString());
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.redirectOutput(
        options
            .commandOutput()
            .map(p -> ProcessBuilder.Redirect.to(p.toFile()))
            .orElse(ProcessBuilder.Redirect.INHERIT));
    // 192-byte text chunks need strings of 200 bytes (the most bpftrace 0.17 allows on its stack).
    pb.environment().put("BPFTRACE_STRLEN", "200");
    // 4 MiB per CPU instead of 256 KiB: a tight launch loop outruns the reader otherwise.
    pb.environment().putIfAbsent("BPFTRACE_PERF_RB_PAGES", "1024");
    options
        .nvtxInjection()
        .ifPresent(lib -> pb.environment().putIfAbsent(NvtxInjection.ENV, lib.toString()));
    pb.environment().putAll(options.environment());
    Process process;
    try {
      process = pb.start();
    } catch (IOException e) {
      deleteQuietly(file);
      deleteQuietly(fifo);
      deleteQuietly(file.getParent());
      throw new BpfUnavailableException(
          "cannot run "
              + options.bpftrace()
              + " (install it with"
              + " ebpf-bridge/scripts/install-bpftrace): "
              + e.getMessage(),
          e);
    }
    try {
      process.getOutputStream().close(); // the command bpftrace launches reads no input from us
    } catch (IOException e) {
      // already closed
    }
    EbpfBridge bridge = new EbpfBridge(options, sink, program, file, fifo, process);
    bridge.reader.start();
    bridge.stderrReader.start();
    bridge.processor.start();
    bridge.awaitAttached();
    return bridge;
  }

  private void awaitAttached() {
    try {
      boolean ok = false;
      long deadline = System.nanoTime() + options.attachTimeout().toNanos();
      while (System.nanoTime() < deadline) {
        if (attached.await(50, TimeUnit.MILLISECONDS)) {
          ok = true;
          break;
        }
        if (!bpftrace.isAlive()) {
          // bpftrace died before attaching: the reader saw EOF.
          break;
        }
      }
      if (ok) {
        // The command bpftrace launched: remembered now, because it outlives a killed bpftrace.
        bpftrace.toHandle().children().forEach(targets::add);
        return;
      }
      boolean alive = bpftrace.isAlive();
      stopProcesses();
      unblockReader();
      awaitThreads(Duration.ofSeconds(5));
      String err = stderrTail();
      if (alive) {
        throw new EbpfBridgeException(
            "bpftrace did not attach its probes within " + options.attachTimeout() + ": " + err);
      }
      throw classifyStartFailure(bpftrace.exitValue(), err);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stopProcesses();
      throw new EbpfBridgeException("interrupted while bpftrace attached its probes", e);
    } finally {
      if (attached.getCount() > 0) {
        deleteQuietly(programFile);
      }
    }
  }

  private static EbpfBridgeException classifyStartFailure(int exit, String err) {
    String e = err.toLowerCase(Locale.ROOT);
    if (e.contains("operation not permitted")
        || e.contains("permission denied")
        || e.contains("must be run as root")
        || e.contains("bpf_prog_load")
        || e.contains("kernel does not support")
        || e.contains("lockdown")) {
      return new BpfUnavailableException(
          "the kernel refused the BPF program (exit " + exit + "): " + err);
    }
    if (e.contains("no such process") || e.contains("does not exist") && e.contains("pid")) {
      return new EbpfBridgeException(
          "the target process went away before bpftrace attached (exit " + exit + "): " + err);
    }
    return new EbpfBridgeException("bpftrace failed to start (exit " + exit + "): " + err);
  }

  /** The probes as attached, {@code library:symbol}. */
  public ProbeProgram program() {
    return program;
  }

  /** The bpftrace process (for monitoring; stop it through {@link #close()}). */
  public ProcessHandle bpftraceProcess() {
    return bpftrace.toHandle();
  }

  /** The command bpftrace launched, when it did. */
  public List<ProcessHandle> targetProcesses() {
    return List.copyOf(targets);
  }

  /** Probes bpftrace reported attached. */
  public int attachedProbes() {
    return attachedProbes;
  }

  /**
   * Waits until bpftrace ends by itself (the command or the target process exited) and every span
   * was delivered.
   *
   * @throws BpftraceFailedException bpftrace died with an error (spans read before were delivered)
   * @throws EbpfBridgeException the timeout passed (bpftrace keeps running; {@link #close()} stops
   *     it)
   */
  public BridgeSummary awaitCompletion(Duration timeout) {
    try {
      if (!done.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new EbpfBridgeException("bpftrace still running after " + timeout);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EbpfBridgeException("interrupted while waiting for bpftrace", e);
    }
    return finish();
  }

  /**
   * Stops bpftrace and the command it launched, delivers what was read, and returns the summary.
   */
  public BridgeSummary stop() {
    stopping = true;
    stopProcesses();
    try {
      if (!done.await(30, TimeUnit.SECONDS)) {
        throw new EbpfBridgeException("bpftrace output did not end 30 s after it was stopped");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return finish();
  }

  @Override
  public void close() {
    if (summary == null && failure == null) {
      try {
        stop();
      } catch (BpftraceFailedException ignored) {
        // close() only guarantees the cleanup; awaitCompletion/stop report failures
      }
    } else {
      stopProcesses();
    }
    deleteQuietly(programFile);
    if (done.getCount() == 0) {
      deleteQuietly(fifo);
      deleteQuietly(programFile.getParent());
    }
  }

  private synchronized BridgeSummary finish() {
    if (summary != null) {
      return summary;
    }
    if (failure != null) {
      throw failure;
    }
    int exit;
    try {
      if (!bpftrace.waitFor(10, TimeUnit.SECONDS)) {
        stopProcesses();
      }
      exit = bpftrace.waitFor(10, TimeUnit.SECONDS) ? bpftrace.exitValue() : -1;
      stderrReader.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      exit = -1;
    }
    reapTargets();
    unblockReader();
    BridgeSummary s =
        new BridgeSummary(
            assembler.launches,
            assembler.driverLaunches,
            assembler.syncs,
            assembler.nvtxRanges,
            assembler.stepRanges,
            assembler.attributedLaunches,
            assembler.spans,
            malformed,
            lost,
            stopping ? -1 : exit);
    if (!stopping && exit != 0) {
      failure = new BpftraceFailedException(exit, stderrTail(), s);
      throw failure;
    }
    summary = s;
    return s;
  }

  /**
   * Ends the process tree: the launched command first (bpftrace then sees it exit, flushes and
   * exits by itself, reaping it), then bpftrace with SIGINT, then by force.
   */
  private void stopProcesses() {
    List<ProcessHandle> tree = new ArrayList<>(targets);
    if (bpftrace.isAlive()) {
      bpftrace.toHandle().descendants().filter(h -> !tree.contains(h)).forEach(tree::add);
    }
    for (ProcessHandle h : tree) {
      h.destroy();
    }
    if (bpftrace.isAlive() && !waitFor(bpftrace, 3000)) {
      signal(bpftrace.pid(), "INT");
      if (!waitFor(bpftrace, 3000)) {
        bpftrace.destroyForcibly();
        waitFor(bpftrace, 3000);
      }
    }
    for (ProcessHandle h : tree) {
      if (h.isAlive()) {
        h.destroyForcibly();
      }
    }
    reapTargets();
  }

  /**
   * A bpftrace that died before opening the pipe leaves the reader blocked in open(): release it.
   */
  private void unblockReader() {
    if (!fifoOpened && !bpftrace.isAlive()) {
      Thread.ofPlatform()
          .daemon()
          .start(
              () -> {
                try (var out = Files.newOutputStream(fifo)) {
                  // opening is enough: the reader sees EOF when this closes
                } catch (IOException e) {
                  // nothing to release
                }
              });
    }
  }

  private void reapTargets() {
    for (ProcessHandle h : targets) {
      if (h.isAlive()) {
        h.destroyForcibly();
        try {
          h.onExit().get(3, TimeUnit.SECONDS);
        } catch (Exception e) {
          // reported by the caller's checks; nothing more to do
        }
      }
    }
  }

  private static boolean waitFor(Process p, long millis) {
    try {
      return p.waitFor(millis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !p.isAlive();
    }
  }

  private static void signal(long pid, String signal) {
    try {
      new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
          .redirectErrorStream(true)
          .start()
          .waitFor(3, TimeUnit.SECONDS);
    } catch (IOException e) {
      // no kill(1): the caller falls back to destroyForcibly
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void readStdout() {
    try (BufferedReader in =
        new BufferedReader(
            new InputStreamReader(Files.newInputStream(fifo), StandardCharsets.UTF_8))) {
      fifoOpened = true;
      String line;
      while ((line = in.readLine()) != null) {
        if (line.startsWith("{\"type\": \"attached_probes\"")
            || line.startsWith("{\"type\":\"attached_probes\"")) {
          try {
            if (parser.parse(line) instanceof ProbeOutputParser.Attached a) {
              attachedProbes = a.probes();
            }
          } catch (IllegalArgumentException e) {
            malformed++;
          }
          attached.countDown();
          continue;
        }
        lines.put(line);
      }
    } catch (IOException e) {
      // bpftrace's stdout closed under us: treated as its end
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        lines.put(EOF);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void readStderr() {
    try (InputStream in = bpftrace.getErrorStream()) {
      byte[] buf = new byte[4096];
      int n;
      while ((n = in.read(buf)) > 0) {
        synchronized (stderr) {
          stderr.append(new String(buf, 0, n, StandardCharsets.UTF_8));
          if (stderr.length() > 4 * STDERR_TAIL) {
            stderr.delete(0, stderr.length() - STDERR_TAIL);
          }
        }
      }
    } catch (IOException e) {
      // closed
    }
  }

  private String stderrTail() {
    synchronized (stderr) {
      // bpftrace 0.17 always warns about RLIMIT_MEMLOCK and detach errors: leave them out.
      StringBuilder out = new StringBuilder();
      for (String l : stderr.toString().split("\n")) {
        if (!l.isBlank()
            && !l.contains("RLIMIT_MEMLOCK")
            && !l.contains("failed to detach probe")
            && !l.contains("uprobe_events): No such file")) {
          out.append(l.strip()).append(" | ");
        }
      }
      String s = out.length() == 0 ? "(nothing on stderr)" : out.substring(0, out.length() - 3);
      return s.length() > STDERR_TAIL ? "..." + s.substring(s.length() - STDERR_TAIL) : s;
    }
  }

  /** Puts events in time order ({@link ReorderBuffer}) and builds spans. */
  private void process() {
    ReorderBuffer order = new ReorderBuffer(options.reorderWindow());
    long recheck = options.clockRecheck().toNanos();
    long nextRecheck = System.nanoTime() + recheck;
    try {
      while (true) {
        String line = lines.poll(50, TimeUnit.MILLISECONDS);
        if (line == EOF) {
          break;
        }
        if (line != null) {
          try {
            ProbeOutputParser.Line parsed = parser.parse(line);
            if (parsed instanceof ProbeOutputParser.Event e) {
              order.add(e.event());
            } else if (parsed instanceof ProbeOutputParser.Lost l) {
              lost += l.count();
            }
          } catch (IllegalArgumentException bad) {
            malformed++;
          }
        }
        long now = System.nanoTime();
        order.release(now, assembler::accept);
        if (line == null) {
          assembler.tick(order.horizon(now));
          assembler.flush();
        }
        if (now >= nextRecheck) {
          assembler.clock(ClockOffset.measure());
          nextRecheck = now + recheck;
        }
      }
      order.drain(assembler::accept);
      assembler.finish();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      assembler.finish();
    } catch (RuntimeException e) {
      failure = new EbpfBridgeException("building or delivering spans failed: " + e, e);
    } finally {
      done.countDown();
    }
  }

  private void awaitThreads(Duration timeout) {
    try {
      done.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return null;
    }
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // a temp file
    }
  }
}
