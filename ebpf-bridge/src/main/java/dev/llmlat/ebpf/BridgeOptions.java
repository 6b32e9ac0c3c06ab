package dev.llmlat.ebpf;

import dev.llmlat.nvtx.NvtxPattern;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How to run the bridge: a target (a running {@link Builder#pid process} or a {@link
 * Builder#command command} bpftrace starts), the libraries (discovered unless given) and how spans
 * are built. Immutable; see {@link #builder()}.
 */
public final class BridgeOptions {
  private final long pid;
  private final String command;
  private final String bpftrace;
  private final List<Path> runtimeLibraries;
  private final List<Path> driverLibraries;
  private final List<Path> nvtxLibraries;
  private final Path nvtxInjection;
  private final Map<String, String> environment;
  private final NvtxPattern pattern;
  private final String serviceName;
  private final int batchSize;
  private final int maxEventsPerSpan;
  private final Duration attachTimeout;
  private final Duration reorderWindow;
  private final Duration clockRecheck;
  private final Duration unattributedWindow;
  private final boolean demangle;
  private final Path commandOutput;

  private BridgeOptions(Builder b) {
    this.pid = b.pid;
    this.command = b.command;
    this.bpftrace = b.bpftrace;
    this.runtimeLibraries = List.copyOf(b.runtimeLibraries);
    this.driverLibraries = List.copyOf(b.driverLibraries);
    this.nvtxLibraries = List.copyOf(b.nvtxLibraries);
    this.nvtxInjection = b.nvtxInjection;
    this.environment = Map.copyOf(b.environment);
    this.pattern = b.pattern;
    this.serviceName = b.serviceName;
    this.batchSize = b.batchSize;
    this.maxEventsPerSpan = b.maxEventsPerSpan;
    this.attachTimeout = b.attachTimeout;
    this.reorderWindow = b.reorderWindow;
    this.clockRecheck = b.clockRecheck;
    this.unattributedWindow = b.unattributedWindow;
    this.demangle = b.demangle;
    this.commandOutput = b.commandOutput;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The running process to probe ({@code bpftrace -p}), or 0 when a command is launched. */
  public long pid() {
    return pid;
  }

  /**
   * The command bpftrace launches and probes ({@code bpftrace -c}; split on spaces, no shell), or
   * empty.
   */
  public Optional<String> command() {
    return Optional.ofNullable(command);
  }

  public String bpftrace() {
    return bpftrace;
  }

  public List<Path> runtimeLibraries() {
    return runtimeLibraries;
  }

  public List<Path> driverLibraries() {
    return driverLibraries;
  }

  public List<Path> nvtxLibraries() {
    return nvtxLibraries;
  }

  /**
   * llmlat's NVTX injection library: probed, and set as {@code NVTX_INJECTION64_PATH} for a
   * command.
   */
  public Optional<Path> nvtxInjection() {
    return Optional.ofNullable(nvtxInjection);
  }

  /** Extra environment for bpftrace and the command it launches. */
  public Map<String, String> environment() {
    return environment;
  }

  public NvtxPattern pattern() {
    return pattern;
  }

  public String serviceName() {
    return serviceName;
  }

  public int batchSize() {
    return batchSize;
  }

  public int maxEventsPerSpan() {
    return maxEventsPerSpan;
  }

  public Duration attachTimeout() {
    return attachTimeout;
  }

  public Duration reorderWindow() {
    return reorderWindow;
  }

  public Duration clockRecheck() {
    return clockRecheck;
  }

  public Duration unattributedWindow() {
    return unattributedWindow;
  }

  public boolean demangle() {
    return demangle;
  }

  /** Where the launched command's stdout goes; empty: this process's stdout. */
  public Optional<Path> commandOutput() {
    return Optional.ofNullable(commandOutput);
  }

  public static final class Builder {
    private long pid;
    private String command;
    private String bpftrace = "bpftrace";
    private final List<Path> runtimeLibraries = new ArrayList<>();
    private final List<Path> driverLibraries = new ArrayList<>();
    private final List<Path> nvtxLibraries = new ArrayList<>();
    private Path nvtxInjection;
    private final Map<String, String> environment = new LinkedHashMap<>();
    private NvtxPattern pattern = NvtxPattern.AUTO;
    private String serviceName = "llmlat-ebpf";
    private int batchSize = 512;
    private int maxEventsPerSpan = 10_000;
    private Duration attachTimeout = Duration.ofSeconds(60);
    private Duration reorderWindow = Duration.ofMillis(200);
    private Duration clockRecheck = Duration.ofSeconds(10);
    private Duration unattributedWindow = Duration.ofSeconds(1);
    private boolean demangle = true;
    private Path commandOutput;

    private Builder() {}

    /**
     * Writes the launched command's stdout to this file (default: inherit this process's stdout).
     */
    public Builder commandOutput(Path file) {
      this.commandOutput = file;
      return this;
    }

    public Builder pid(long pid) {
      if (pid <= 0) {
        throw new IllegalArgumentException("pid must be positive: " + pid);
      }
      this.pid = pid;
      return this;
    }

    public Builder command(String command) {
      this.command = Objects.requireNonNull(command, "command");
      return this;
    }

    /** The bpftrace executable (default: {@code bpftrace} on the PATH). */
    public Builder bpftrace(String bpftrace) {
      this.bpftrace = Objects.requireNonNull(bpftrace, "bpftrace");
      return this;
    }

    public Builder runtimeLibrary(Path library) {
      runtimeLibraries.add(library);
      return this;
    }

    public Builder driverLibrary(Path library) {
      driverLibraries.add(library);
      return this;
    }

    public Builder nvtxLibrary(Path library) {
      nvtxLibraries.add(library);
      return this;
    }

    public Builder nvtxInjection(Path library) {
      this.nvtxInjection = library;
      return this;
    }

    public Builder environment(String name, String value) {
      environment.put(name, value);
      return this;
    }

    public Builder pattern(NvtxPattern pattern) {
      this.pattern = Objects.requireNonNull(pattern, "pattern");
      return this;
    }

    public Builder serviceName(String serviceName) {
      this.serviceName = Objects.requireNonNull(serviceName, "serviceName");
      return this;
    }

    public Builder batchSize(int batchSize) {
      if (batchSize < 1) {
        throw new IllegalArgumentException("batchSize must be at least 1");
      }
      this.batchSize = batchSize;
      return this;
    }

    /** Launch events kept on one span; more are counted in {@code dropped_events_count}. */
    public Builder maxEventsPerSpan(int max) {
      this.maxEventsPerSpan = Math.max(0, max);
      return this;
    }

    public Builder attachTimeout(Duration timeout) {
      this.attachTimeout = Objects.requireNonNull(timeout);
      return this;
    }

    /**
     * How long events wait to be put in time order (bpftrace reads per-CPU buffers, not in order).
     */
    public Builder reorderWindow(Duration window) {
      this.reorderWindow = Objects.requireNonNull(window);
      return this;
    }

    public Builder clockRecheck(Duration interval) {
      this.clockRecheck = Objects.requireNonNull(interval);
      return this;
    }

    /** Launches outside any step range are grouped per thread into spans of at most this length. */
    public Builder unattributedWindow(Duration window) {
      this.unattributedWindow = Objects.requireNonNull(window);
      return this;
    }

    /** Demangle kernel names with {@code c++filt} when it is installed (default true). */
    public Builder demangle(boolean demangle) {
      this.demangle = demangle;
      return this;
    }

    /**
     * @throws IllegalArgumentException unless exactly one of pid and command is set
     */
    public BridgeOptions build() {
      if ((pid > 0) == (command != null)) {
        throw new IllegalArgumentException("give exactly one target: a pid or a command");
      }
      return new BridgeOptions(this);
    }
  }
}
