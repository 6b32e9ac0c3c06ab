package dev.llmlat.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MainTest {
  @Test
  void parsesFlagsIntoAValidatedConfig() {
    EngineConfig c = Main.parse("--port", "0", "--model=llama", "--max-batch", "16", "--chunked-prefill-budget", "512",
        "--kv-cache-tokens", "4096", "--time-scale", "0.1", "--kafka-bootstrap", "127.0.0.1:9092");
    assertThat(c.port()).isZero();
    assertThat(c.model()).isEqualTo("llama");
    assertThat(c.maxBatch()).isEqualTo(16);
    assertThat(c.chunkedPrefill()).isTrue();
    assertThat(c.kvCacheTokens()).isEqualTo(4096);
    assertThat(c.timeScale()).isEqualTo(0.1);
    assertThat(c.exporter()).isEqualTo(ExporterKind.KAFKA);
    assertThat(c.topic()).isEqualTo("otlp_spans");
    assertThat(Main.parse().exporter()).isEqualTo(ExporterKind.LOGGING);
  }

  @Test
  void rejectsBadFlags() {
    assertThatThrownBy(() -> Main.parse("--max-batch", "0")).hasMessageContaining("max batch");
    assertThatThrownBy(() -> Main.parse("--time-scale", "fast")).hasMessageContaining("--time-scale");
    assertThatThrownBy(() -> Main.parse("--exporter", "kafka")).hasMessageContaining("--kafka-bootstrap");
    assertThatThrownBy(() -> Main.parse("--chunked-prefill-budget", "4", "--max-batch", "8")).hasMessageContaining("decode token");
    assertThatThrownBy(() -> Main.parse("--bogus", "1")).hasMessageContaining("unknown flag");
    assertThatThrownBy(() -> Main.parse("--port")).hasMessageContaining("needs a value");
  }
}
