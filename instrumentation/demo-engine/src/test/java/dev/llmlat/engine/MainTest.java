package dev.llmlat.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MainTest {
  @Test
  void parsesFlagsIntoAValidatedConfig() {
    EngineConfig c =
        Main.parse(
            "--port",
            "0",
            "--model=llama",
            "--max-num-seqs",
            "16",
            "--max-num-batched-tokens",
            "512",
            "--enable-chunked-prefill",
            "--block-size=32",
            "--num-gpu-blocks",
            "128",
            "--time-scale",
            "0.1",
            "--kafka-bootstrap",
            "127.0.0.1:9092");
    assertThat(c.port()).isZero();
    assertThat(c.model()).isEqualTo("llama");
    assertThat(c.limits()).isEqualTo(new SchedulerLimits(16, 512, 32, 128));
    assertThat(c.limits().kvTokens()).isEqualTo(4096);
    assertThat(c.chunkedPrefill()).isTrue();
    assertThat(c.timeScale()).isEqualTo(0.1);
    assertThat(c.exporter()).isEqualTo(ExporterKind.KAFKA);
    assertThat(c.topic()).isEqualTo("otlp_spans");
    EngineConfig defaults = Main.parse();
    assertThat(defaults.exporter()).isEqualTo(ExporterKind.LOGGING);
    assertThat(defaults.limits()).isEqualTo(new SchedulerLimits(8, 8192, 16, 2048));
    assertThat(defaults.chunkedPrefill()).isFalse();
  }

  @Test
  void rejectsBadFlags() {
    assertThatThrownBy(() -> Main.parse("--max-num-seqs", "0"))
        .hasMessageContaining("--max-num-seqs must be 1..65536, got 0");
    assertThatThrownBy(() -> Main.parse("--block-size", "0"))
        .hasMessageContaining("--block-size must be 1..1024 tokens, got 0");
    assertThatThrownBy(() -> Main.parse("--num-gpu-blocks", "0"))
        .hasMessageContaining("--num-gpu-blocks must be at least 1, got 0");
    assertThatThrownBy(() -> Main.parse("--num-gpu-blocks", "1", "--block-size", "1"))
        .hasMessageContaining("at least 2 tokens");
    assertThatThrownBy(() -> Main.parse("--num-gpu-blocks", "4194304", "--block-size", "1024"))
        .hasMessageContaining("more than 2^31");
    assertThatThrownBy(() -> Main.parse("--time-scale", "fast"))
        .hasMessageContaining("--time-scale");
    assertThatThrownBy(() -> Main.parse("--exporter", "kafka"))
        .hasMessageContaining("--kafka-bootstrap");
    assertThatThrownBy(() -> Main.parse("--max-num-batched-tokens", "4", "--max-num-seqs", "8"))
        .hasMessageContaining(
            "--max-num-batched-tokens 4 cannot fit one decode token per running request (--max-num-seqs 8)");
    assertThatThrownBy(() -> Main.parse("--bogus", "1")).hasMessageContaining("unknown flag");
    assertThatThrownBy(() -> Main.parse("--port")).hasMessageContaining("needs a value");
  }
}
