package dev.llmlat.services;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Optional;

/** A running service's PID and address, in a two-line file under {@code $LLMLAT_HOME/run}. */
public record PidFile(long pid, String address) {

  /** The live process a PID file names, if the file exists and that process still runs. */
  public static Optional<PidFile> read(Path file) {
    try {
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      PidFile pf =
          new PidFile(
              Long.parseLong(lines.get(0).strip()), lines.size() > 1 ? lines.get(1).strip() : "");
      return ProcessHandle.of(pf.pid()).filter(ProcessHandle::isAlive).map(p -> pf);
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** Writes atomically (temp file + rename), so a reader never sees half a file. */
  public void write(Path file) throws IOException {
    Files.createDirectories(file.getParent());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(tmp, pid + "\n" + address + "\n", StandardCharsets.UTF_8);
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  public Optional<ProcessHandle> process() {
    return ProcessHandle.of(pid).filter(ProcessHandle::isAlive);
  }
}
