package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentRoundsTest {
  @TempDir Path dir;

  @Test
  void readsTheRoundLinesWithAndWithoutStolenTime() throws Exception {
    Path out =
        Files.writeString(
            dir.resolve("run.txt"),
            String.join(
                "\n",
                "gateways on CPUs 1; load generator, upstream, broker and OTLP receiver on CPUs 0",
                "round 1 p50 ms (stolen CPU): no agent 1.000 (3%); vanilla agent+otlp 1.250 (0%); agent+extension+kafka 1.500 (12%);",
                "round 2 p50 ms: no agent 2.000; vanilla agent+otlp 2.000; agent+extension+kafka 1.000;",
                "no agent                       p50   1.116 ms  p99   6.956 ms    2275.3 req/s"));
    AgentRounds rounds = AgentRounds.read(out);
    assertThat(rounds.size()).isEqualTo(2);
    assertThat(rounds.ratios("agent+extension+kafka", "vanilla agent+otlp"))
        .containsExactly(1.2, 0.5);
    assertThatThrownBy(() -> rounds.ratios("agent+extension, kafka down", "no agent"))
        .hasMessageContaining("round 1 has no p50 for agent+extension, kafka down");
  }

  @Test
  void refusesWhatIsNotABenchmarksOutput() throws Exception {
    Path other =
        Files.writeString(
            dir.resolve("other.txt"), "median of rounds 2-8: raw scan 1598512 kernels/s\n");
    assertThatThrownBy(() -> AgentRounds.read(other))
        .hasMessageContaining("other.txt: no \"round N p50 ms\" lines");
    assertThatThrownBy(() -> AgentRounds.read(dir.resolve("missing.txt")))
        .hasMessageContaining("missing.txt: no such file");
  }
}
