package dev.llmlat.ebpf;

import java.nio.file.Path;
import java.util.List;

/**
 * The libraries a probe program attaches to, by real path (a uprobe sits on a file's inode, so the
 * path must be the file the target process actually maps).
 *
 * @param runtimes CUDA runtime libraries ({@code libcudart.so*})
 * @param drivers CUDA driver libraries ({@code libcuda.so*})
 * @param nvtxExports libraries exporting the NVTX API ({@code libnvToolsExt.so*}, {@code
 *     libnvtx3interop.so*})
 * @param nvtxInjections llmlat's NVTX injection library ({@link NvtxInjection})
 */
public record CudaLibraries(
    List<Path> runtimes, List<Path> drivers, List<Path> nvtxExports, List<Path> nvtxInjections) {
  public CudaLibraries {
    runtimes = List.copyOf(runtimes);
    drivers = List.copyOf(drivers);
    nvtxExports = List.copyOf(nvtxExports);
    nvtxInjections = List.copyOf(nvtxInjections);
  }

  public boolean isEmpty() {
    return runtimes.isEmpty()
        && drivers.isEmpty()
        && nvtxExports.isEmpty()
        && nvtxInjections.isEmpty();
  }
}
