package dev.llmlat.scheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class NvtxRangeTest {
  private static final String SPAN = "5e1c9a0b7f3d2a11";
  private static final String T1 = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String T2 = "0af7651916cd43dd8448eb211c80319c";

  @Test
  void rendersTheDocumentedText() {
    assertThat(new NvtxRange(SPAN, StepKind.MIXED, List.of(T1, T2)).text())
        .isEqualTo("llmlat step=5e1c9a0b7f3d2a11 kind=mixed traces=" + T1 + "," + T2);
    assertThat(new NvtxRange(SPAN, StepKind.PREFILL, List.of(T1, T1)).text())
        .isEqualTo("llmlat step=5e1c9a0b7f3d2a11 kind=prefill traces=" + T1);
  }

  @Test
  void parsesWhatItRenders() {
    for (StepKind kind : StepKind.values()) {
      NvtxRange range = new NvtxRange(SPAN, kind, List.of(T2, T1));
      assertThat(NvtxRange.parse(range.text())).isEqualTo(range);
    }
    NvtxRange parsed = NvtxRange.parse("llmlat step=" + SPAN + " kind=decode traces=" + T1);
    assertThat(parsed.stepSpanId()).isEqualTo(SPAN);
    assertThat(parsed.kind()).isEqualTo(StepKind.DECODE);
    assertThat(parsed.traceIds()).containsExactly(T1);
  }

  @Test
  void rejectsOtherText() {
    assertThat(NvtxRange.tryParse("prefill " + T1))
        .isEmpty(); // the h200-tinylm capture's own format
    assertThat(NvtxRange.tryParse("decode " + T1 + "," + T2)).isEmpty();
    assertThat(NvtxRange.tryParse("llmlat step=" + SPAN + " kind=decode traces=" + T1 + " "))
        .isEmpty();
    assertThat(
            NvtxRange.tryParse("llmlat step=" + SPAN.toUpperCase() + " kind=decode traces=" + T1))
        .isEmpty();
    assertThat(NvtxRange.tryParse("llmlat step=" + SPAN + " kind=verify traces=" + T1)).isEmpty();
    assertThat(NvtxRange.tryParse("llmlat step=" + SPAN + " kind=decode traces=")).isEmpty();
    assertThat(NvtxRange.tryParse("llmlat step=" + SPAN + " kind=decode traces=" + T1 + ", " + T2))
        .isEmpty();
    assertThat(NvtxRange.tryParse("llmlat step=0000000000000000 kind=decode traces=" + T1))
        .isEmpty();
    assertThat(NvtxRange.tryParse(null)).isEmpty();
    assertThatThrownBy(() -> NvtxRange.parse("decode " + T1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not an llmlat NVTX step range");
    assertThatThrownBy(() -> new NvtxRange(SPAN, StepKind.DECODE, List.of()))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
