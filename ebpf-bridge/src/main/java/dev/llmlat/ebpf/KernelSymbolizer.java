package dev.llmlat.ebpf;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Names the kernel behind a {@code cudaLaunchKernel} function pointer: the host stub symbol nvcc
 * emits under the kernel's mangled name, found through the process's mappings and the mapped file's
 * ELF symbols. Maps are read on the first address of a process (and again for an address outside
 * them, e.g. after a dlopen), so a process that already exited stays unnamed.
 */
public final class KernelSymbolizer {
  private final boolean demangle;
  private final Map<Long, ProcessMaps> maps = new HashMap<>();
  private final Map<String, Optional<ElfSymbols>> files = new HashMap<>();
  private final Map<Long, Map<Long, Optional<String>>> names = new HashMap<>();
  private final Map<String, String> demangled = new HashMap<>();

  public KernelSymbolizer(boolean demangle) {
    this.demangle = demangle;
  }

  /**
   * Reads the process's maps now, while it surely lives (called when the bridge sees its first
   * event).
   */
  public void snapshot(long pid) {
    try {
      maps.put(pid, ProcessMaps.read(pid));
    } catch (TargetProcessNotFoundException gone) {
      // Exited already: its addresses stay unnamed.
    }
  }

  public Optional<String> resolve(long pid, long address) {
    return names
        .computeIfAbsent(pid, p -> new HashMap<>())
        .computeIfAbsent(address, a -> lookup(pid, a));
  }

  private Optional<String> lookup(long pid, long address) {
    ProcessMaps m = maps.get(pid);
    if (m == null || m.at(address).isEmpty()) {
      snapshot(pid);
      m = maps.get(pid);
    }
    if (m == null) {
      return Optional.empty();
    }
    Optional<ProcessMaps.Mapping> mapping = m.at(address);
    if (mapping.isEmpty()) {
      return Optional.empty();
    }
    ProcessMaps.Mapping map = mapping.get();
    // Through /proc/PID/root: the target may live in another mount namespace (a container).
    Optional<ElfSymbols> elf = files.computeIfAbsent(map.path(), p -> readElf(pid, p));
    return elf.flatMap(e -> e.vaddrOfFileOffset(address - map.start() + map.fileOffset()))
        .flatMap(v -> elf.get().functionAt(v))
        .map(this::demangle);
  }

  private static Optional<ElfSymbols> readElf(long pid, String path) {
    for (Path p : new Path[] {Path.of("/proc", Long.toString(pid), "root", path), Path.of(path)}) {
      try {
        return Optional.of(ElfSymbols.read(p));
      } catch (IOException | RuntimeException e) {
        // try the next view of the file
      }
    }
    return Optional.empty();
  }

  private String demangle(String name) {
    if (!demangle || !name.startsWith("_Z")) {
      return name;
    }
    return demangled.computeIfAbsent(name, KernelSymbolizer::cxxfilt);
  }

  private static String cxxfilt(String mangled) {
    try {
      Process p = new ProcessBuilder("c++filt", mangled).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      if (p.waitFor(5, TimeUnit.SECONDS) && p.exitValue() == 0 && !out.isEmpty()) {
        return out;
      }
      p.destroyForcibly();
    } catch (IOException e) {
      // no binutils: keep the mangled name
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return mangled;
  }
}
