package dev.llmlat.ebpf;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Finds the CUDA and NVTX libraries to probe. For a running process its {@code /proc/PID/maps} is
 * the truth (what it really loaded, in its own mount namespace); otherwise {@code ldconfig -p},
 * then {@code /usr/local/cuda*}/{@code lib64} and {@code lib}. Libraries given explicitly win.
 */
public final class LibraryDiscovery {
  static final String RUNTIME = "libcudart.so";
  static final String DRIVER = "libcuda.so";
  static final List<String> NVTX_EXPORTS = List.of("libnvToolsExt.so", "libnvtx3interop.so");
  static final String INJECTION = NvtxInjection.FILE_PREFIX;

  private LibraryDiscovery() {}

  public static CudaLibraries discover(BridgeOptions options) {
    if (options.pid() > 0) {
      ProcessMaps maps = ProcessMaps.read(options.pid());
      String root = "/proc/" + options.pid() + "/root";
      List<Path> injections = new ArrayList<>(fromMaps(maps, root, INJECTION));
      options.nvtxInjection().ifPresent(p -> injections.addFirst(p));
      return new CudaLibraries(
          explicitOr(options.runtimeLibraries(), fromMaps(maps, root, RUNTIME)),
          explicitOr(options.driverLibraries(), fromMaps(maps, root, DRIVER)),
          explicitOr(
              options.nvtxLibraries(),
              NVTX_EXPORTS.stream().flatMap(n -> fromMaps(maps, root, n).stream()).toList()),
          distinct(injections));
    }
    List<String> ldconfig = ldconfig();
    List<Path> runtime = explicitOr(options.runtimeLibraries(), first(ldconfig, RUNTIME, true));
    List<Path> driver = explicitOr(options.driverLibraries(), first(ldconfig, DRIVER, false));
    List<Path> nvtx =
        options.nvtxLibraries().isEmpty()
            ? distinct(
                NVTX_EXPORTS.stream().flatMap(n -> first(ldconfig, n, true).stream()).toList())
            : options.nvtxLibraries();
    return new CudaLibraries(runtime, driver, nvtx, options.nvtxInjection().stream().toList());
  }

  private static List<Path> explicitOr(List<Path> explicit, List<Path> found) {
    return explicit.isEmpty() ? found : explicit;
  }

  private static List<Path> fromMaps(ProcessMaps maps, String root, String prefix) {
    List<Path> out = new ArrayList<>();
    for (String file : maps.filesNamed(prefix)) {
      Path inNamespace = Path.of(root + file);
      out.add(
          Files.exists(inNamespace) && !Files.exists(Path.of(file)) ? inNamespace : Path.of(file));
    }
    return distinct(out);
  }

  /** The first library named {@code prefix*}: ldconfig's answer, else the CUDA toolkit folders. */
  private static List<Path> first(List<String> ldconfig, String prefix, boolean searchToolkit) {
    for (String line : ldconfig) {
      // "\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda-13.0/lib/libcudart.so.13"
      String t = line.trim();
      int arrow = t.indexOf("=> ");
      if (t.startsWith(prefix) && arrow > 0 && t.contains("x86-64")) {
        return distinct(List.of(Path.of(t.substring(arrow + 3).trim())));
      }
    }
    if (searchToolkit) {
      for (Path dir : toolkitDirs()) {
        Optional<Path> hit = firstIn(dir, prefix);
        if (hit.isPresent()) {
          return distinct(List.of(hit.get()));
        }
      }
    }
    return List.of();
  }

  private static List<Path> toolkitDirs() {
    List<Path> dirs = new ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(Path.of("/usr/local"), "cuda*")) {
      for (Path cuda : s) {
        dirs.add(cuda.resolve("lib64"));
        dirs.add(cuda.resolve("lib"));
      }
    } catch (IOException e) {
      // no toolkit
    }
    return dirs;
  }

  private static Optional<Path> firstIn(Path dir, String prefix) {
    if (!Files.isDirectory(dir)) {
      return Optional.empty();
    }
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, prefix + "*")) {
      for (Path p : s) {
        if (Files.isRegularFile(p)) {
          return Optional.of(p);
        }
      }
    } catch (IOException e) {
      // unreadable folder
    }
    return Optional.empty();
  }

  private static List<String> ldconfig() {
    for (String exe : new String[] {"ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"}) {
      try {
        Process p = new ProcessBuilder(exe, "-p").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
          return out.lines().toList();
        }
        p.destroyForcibly();
      } catch (IOException e) {
        // try the next location
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return List.of();
  }

  /** Real paths, duplicates (symlinks to one file) removed. */
  static List<Path> distinct(List<Path> paths) {
    Set<Path> out = new LinkedHashSet<>();
    for (Path p : paths) {
      try {
        out.add(p.toRealPath());
      } catch (IOException e) {
        out.add(p.toAbsolutePath().normalize());
      }
    }
    return List.copyOf(out);
  }
}
