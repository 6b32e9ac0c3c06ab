package dev.llmlat.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The bound on server-sent event lines: its default, its range and how it is written. */
class LineLimitTest {
  private static LoadConfig.Builder config() {
    return LoadConfig.builder(Target.parse("http://127.0.0.1:8000", null), "m");
  }

  @Test
  void theDefaultIs16MibAndTheRangeIsChecked() {
    assertThat(config().build().maxLineBytes()).isEqualTo(16L << 20);
    assertThat(config().maxLineBytes(1024).build().maxLineBytes()).isEqualTo(1024);
    assertThatThrownBy(() -> config().maxLineBytes(100).build())
        .hasMessage("--max-line must be between 1 KiB and 1 GiB, not 100 bytes");
    assertThatThrownBy(() -> config().maxLineBytes(2L << 30).build())
        .hasMessage("--max-line must be between 1 KiB and 1 GiB, not 2 GiB");
  }

  @Test
  void sizesAreWrittenInBinaryUnits() {
    assertThat(ByteSize.parse("--max-line", "16MiB")).isEqualTo(16L << 20);
    assertThat(ByteSize.parse("--max-line", "512k")).isEqualTo(512L << 10);
    assertThat(ByteSize.parse("--max-line", " 1 GiB ")).isEqualTo(1L << 30);
    assertThat(ByteSize.parse("--max-line", "4096")).isEqualTo(4096);
    assertThatThrownBy(() -> ByteSize.parse("--max-line", "lots"))
        .hasMessage("--max-line takes a size such as 16MiB, 512KiB or 4096 (bytes), not 'lots'");
    assertThatThrownBy(() -> ByteSize.parse("--max-line", "9999999999999999999G"))
        .hasMessageContaining("is too large");
    assertThat(ByteSize.describe(1536)).isEqualTo("1536 bytes");
    assertThat(ByteSize.describe(3L << 20)).isEqualTo("3 MiB");
  }
}
