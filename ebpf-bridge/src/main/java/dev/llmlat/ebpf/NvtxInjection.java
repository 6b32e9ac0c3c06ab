package dev.llmlat.ebpf;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * llmlat's NVTX injection library: the only way to see NVTX v3 ranges from eBPF, because v3 is
 * header-only and exports nothing to probe. The target must be started with {@code
 * NVTX_INJECTION64_PATH=<this library>} ({@link BridgeOptions} sets it for {@code --command}). The
 * C source ships in the jar; {@link #build} compiles it with the host's C compiler once per source
 * version. Same as {@code ebpf-bridge/scripts/build-nvtx-injection}.
 */
public final class NvtxInjection {
  /** The library file name starts with this. */
  public static final String FILE_PREFIX = "libllmlat_nvtx_inject";

  /** The environment variable NVTX v3 reads. */
  public static final String ENV = "NVTX_INJECTION64_PATH";

  private static final String SOURCE = "llmlat_nvtx_inject.c";

  private NvtxInjection() {}

  /** The C source of the library. */
  public static String source() {
    try (InputStream in = NvtxInjection.class.getResourceAsStream(SOURCE)) {
      if (in == null) {
        throw new IllegalStateException(SOURCE + " missing from the jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + SOURCE, e);
    }
  }

  /**
   * Builds (or reuses) the library in {@code dir}: {@code libllmlat_nvtx_inject-<source hash>.so}.
   *
   * @throws EbpfBridgeException when no C compiler ({@code cc}, {@code gcc}) builds it
   */
  public static Path build(Path dir) {
    String src = source();
    Path lib = dir.resolve(FILE_PREFIX + "-" + hash(src) + ".so");
    if (Files.isRegularFile(lib)) {
      return lib;
    }
    try {
      Files.createDirectories(dir);
      Path c = Files.createTempFile(dir, "llmlat_nvtx_inject", ".c");
      Path tmp = Files.createTempFile(dir, FILE_PREFIX, ".so.tmp");
      try {
        Files.writeString(c, src);
        String errors = "";
        for (String cc : new String[] {"cc", "gcc"}) {
          Process p =
              new ProcessBuilder(cc, "-shared", "-fPIC", "-O2", "-o", tmp.toString(), c.toString())
                  .redirectErrorStream(true)
                  .start();
          String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
          if (p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0) {
            Files.move(
                tmp, lib, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return lib;
          }
          errors += cc + ": " + out.strip() + "\n";
        }
        throw new EbpfBridgeException("cannot build the NVTX injection library: " + errors);
      } finally {
        Files.deleteIfExists(c);
        Files.deleteIfExists(tmp);
      }
    } catch (IOException e) {
      throw new EbpfBridgeException(
          "cannot build the NVTX injection library in "
              + dir
              + " (is a C compiler installed?): "
              + e.getMessage(),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EbpfBridgeException("interrupted while building the NVTX injection library", e);
    }
  }

  private static String hash(String s) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 6);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
