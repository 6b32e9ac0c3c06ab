package dev.llmlat.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The per-round p50s that {@code llmlat bench agent} prints ({@code round 12 p50 ms (stolen CPU):
 * no agent 1.276 (3%); vanilla agent 1.301 (0%); ...}), read back from its output so that several
 * runs can be taken together ({@link PairedRatio}).
 */
public final class AgentRounds {
  private static final Pattern ROUND = Pattern.compile("^round \\d+ p50 ms[^:]*:(.*)$");
  private static final Pattern MODE =
      Pattern.compile("\\s*([^;]+?) ([0-9]+(?:\\.[0-9]+)?)(?: \\([0-9]+%\\))?;");

  private final Path file;
  private final List<Map<String, Double>> rounds;

  private AgentRounds(Path file, List<Map<String, Double>> rounds) {
    this.file = file;
    this.rounds = rounds;
  }

  /**
   * Reads the round lines of one run's output; refuses a file that is missing, unreadable or has
   * none.
   */
  public static AgentRounds read(Path file) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file);
    } catch (java.nio.file.NoSuchFileException e) {
      throw new IllegalArgumentException(file + ": no such file");
    } catch (IOException | java.io.UncheckedIOException e) {
      throw new IllegalArgumentException(
          file + ": cannot read it as text (" + e.getMessage() + ")");
    }
    List<Map<String, Double>> rounds = new ArrayList<>();
    for (String line : lines) {
      Matcher m = ROUND.matcher(line);
      if (!m.matches()) {
        continue;
      }
      Map<String, Double> p50 = new LinkedHashMap<>();
      Matcher mode = MODE.matcher(m.group(1));
      while (mode.find()) {
        p50.put(mode.group(1), Double.parseDouble(mode.group(2)));
      }
      rounds.add(p50);
    }
    if (rounds.isEmpty()) {
      throw new IllegalArgumentException(
          file + ": no \"round N p50 ms\" lines (the output of llmlat bench agent)");
    }
    return new AgentRounds(file, rounds);
  }

  public int size() {
    return rounds.size();
  }

  /** Per round, {@code mode}'s p50 over {@code baseline}'s. */
  public double[] ratios(String mode, String baseline) {
    double[] r = new double[rounds.size()];
    for (int i = 0; i < r.length; i++) {
      Double a = rounds.get(i).get(mode);
      Double b = rounds.get(i).get(baseline);
      if (a == null || b == null) {
        throw new IllegalArgumentException(
            file + ": round " + (i + 1) + " has no p50 for " + (a == null ? mode : baseline));
      }
      r[i] = a / b;
    }
    return r;
  }
}
