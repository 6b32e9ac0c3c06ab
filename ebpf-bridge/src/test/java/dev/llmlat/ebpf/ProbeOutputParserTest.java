package dev.llmlat.ebpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ProbeOutputParserTest {
  private final ProbeOutputParser parser = new ProbeOutputParser();

  @Test
  void readsLaunchWithUnsignedAddresses() {
    var line =
        parser.parse(
            "{\"type\": \"printf\", \"data\": \"{\\\"e\\\":\\\"launch\\\",\\\"api\\\":\\\"cudaLaunchKernel\\\","
                + "\\\"pid\\\":7,\\\"tid\\\":8,\\\"ns\\\":99,\\\"func\\\":18446744073709551615,\\\"grid\\\":[4,2,1],"
                + "\\\"block\\\":[128,1,1],\\\"smem\\\":0,\\\"stream\\\":0}\\n\"}");
    assertThat(line)
        .isInstanceOfSatisfying(
            ProbeOutputParser.Event.class,
            e -> {
              ProbeEvent.Launch l = (ProbeEvent.Launch) e.event();
              assertThat(l.function()).isEqualTo(-1L);
              assertThat(l.grid()).containsExactly(4, 2, 1);
              assertThat(l.tid()).isEqualTo(8);
            });
  }

  @Test
  void keepsRawTextWithQuotesAndBraces() {
    ProbeEvent e =
        parser.parseProbeLine(
            "{\"e\":\"text\",\"pid\":1,\"tid\":2,\"ns\":3,\"off\":0,\"total\":9,\"text\":\"a \"q\"} x\"}");
    assertThat(((ProbeEvent.TextChunk) e).text()).isEqualTo("a \"q\"} x");
  }

  @Test
  void reportsAttachAndRejectsGarbage() {
    assertThat(parser.parse("{\"type\": \"attached_probes\", \"data\": {\"probes\": 7}}"))
        .isEqualTo(new ProbeOutputParser.Attached(7));
    assertThatThrownBy(() -> parser.parse("not json")).isInstanceOf(IllegalArgumentException.class);
  }
}
