package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.cli.Llmlat;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** `llmlat bench` joins the CLI through ServiceLoader when this module is on the class path. */
class BenchCommandPluggedTest {
  private static String run(String... args) {
    StringWriter out = new StringWriter();
    int exit = Llmlat.run(args, new PrintWriter(out, true), new PrintWriter(out, true));
    assertThat(exit).as(String.join(" ", args) + ": " + out).isZero();
    return out.toString();
  }

  @Test
  void benchIsListedWithItsSubcommands() {
    assertThat(run("--help")).contains("bench");
    String help = run("bench", "--help");
    assertThat(help).startsWith("Usage: llmlat bench");
    for (String sub : new String[] {"ingest", "agent", "import", "analyze", "soak", "faults"}) {
      assertThat(run("bench", sub, "--help")).as(sub).startsWith("Usage: llmlat bench " + sub);
    }
  }
}
