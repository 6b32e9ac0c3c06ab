package dev.llmlat.ebpf;

import java.nio.file.Path;
import java.util.List;

/** A library given or found for probing exports none of the functions the probes attach to. */
public final class MissingProbeSymbolsException extends EbpfBridgeException {
  private static final long serialVersionUID = 1L;
  private final transient Path library;
  private final List<String> expected;

  public MissingProbeSymbolsException(Path library, List<String> expected) {
    super(
        "library "
            + library
            + " exports none of the probed functions "
            + expected
            + " (not a CUDA runtime/driver or NVTX library, or a stripped/static build)");
    this.library = library;
    this.expected = List.copyOf(expected);
  }

  public Path library() {
    return library;
  }

  public List<String> expected() {
    return expected;
  }
}
