package dev.llmlat.ebpf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The file-backed mappings of a process, from {@code /proc/PID/maps}. */
public record ProcessMaps(long pid, List<Mapping> mappings) {

  /** {@code [start, end)} of the address space maps {@code path} from {@code fileOffset}. */
  public record Mapping(long start, long end, long fileOffset, String perms, String path) {
    public boolean executable() {
      return perms.indexOf('x') >= 0;
    }
  }

  public ProcessMaps {
    mappings = List.copyOf(mappings);
  }

  /**
   * @throws TargetProcessNotFoundException when the process is gone
   */
  public static ProcessMaps read(long pid) {
    Path file = Path.of("/proc", Long.toString(pid), "maps");
    List<String> lines;
    try {
      lines = Files.readAllLines(file);
    } catch (IOException e) {
      throw new TargetProcessNotFoundException(pid);
    }
    return parse(pid, lines);
  }

  static ProcessMaps parse(long pid, List<String> lines) {
    List<Mapping> out = new ArrayList<>();
    for (String line : lines) {
      // start-end perms offset dev inode [path]; the path may contain spaces.
      String[] f = line.trim().split("\\s+", 6);
      if (f.length < 6 || !f[5].startsWith("/")) {
        continue;
      }
      int dash = f[0].indexOf('-');
      out.add(
          new Mapping(
              Long.parseUnsignedLong(f[0].substring(0, dash), 16),
              Long.parseUnsignedLong(f[0].substring(dash + 1), 16),
              Long.parseUnsignedLong(f[2], 16),
              f[1],
              f[5].endsWith(" (deleted)") ? f[5].substring(0, f[5].length() - 10) : f[5]));
    }
    return new ProcessMaps(pid, out);
  }

  public Optional<Mapping> at(long address) {
    for (Mapping m : mappings) {
      if (Long.compareUnsigned(address, m.start) >= 0 && Long.compareUnsigned(address, m.end) < 0) {
        return Optional.of(m);
      }
    }
    return Optional.empty();
  }

  /**
   * Distinct mapped file paths whose name starts with {@code prefix} (e.g. {@code libcudart.so}).
   */
  public List<String> filesNamed(String prefix) {
    return mappings.stream()
        .map(Mapping::path)
        .filter(p -> Path.of(p).getFileName().toString().startsWith(prefix))
        .distinct()
        .toList();
  }
}
