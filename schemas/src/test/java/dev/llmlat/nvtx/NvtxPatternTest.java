package dev.llmlat.nvtx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class NvtxPatternTest {
  static final String A = "0123456789abcdef0123456789abcdef";
  static final String B = "fedcba9876543210FEDCBA9876543210";

  @Test
  void llmlatFormatCarriesStepKindAndTraces() {
    assertThat(
            NvtxPattern.LLMLAT.match(
                "llmlat step=00f067aa0ba902b7 kind=mixed traces=" + A + "," + B))
        .contains(new RangeMatch("mixed", "00f067aa0ba902b7", List.of(A, B.toLowerCase())));
    assertThat(NvtxPattern.LLMLAT.match("llmlat step=xyz kind=mixed traces=" + A)).isEmpty();
  }

  @Test
  void presetsOfTheRealCaptures() {
    assertThat(NvtxPattern.PREFILL.match("prefill " + A))
        .contains(new RangeMatch("prefill", null, List.of(A)));
    assertThat(NvtxPattern.DECODE.match("decode " + A + "," + A))
        .contains(new RangeMatch("decode", null, List.of(A, A)));
    assertThat(NvtxPattern.PREFILL_TRACE_ID.match("prefill trace_id=" + A)).isPresent();
    assertThat(NvtxPattern.DECODE_STEP.match("decode_step " + A + "," + B)).isPresent();
    assertThat(NvtxPattern.DECODE.match("decode_step " + A)).isEmpty();
    assertThat(NvtxPattern.AUTO.match("decode_step " + A).orElseThrow().kind()).isEqualTo("decode");
    assertThat(NvtxPattern.AUTO.match("ProfilerStep#3")).isEmpty();
    assertThat(NvtxPattern.preset("auto")).isSameAs(NvtxPattern.AUTO);
  }

  @Test
  void kvTransfersOfOneRequestAreReadByDefault() {
    RangeMatch send = NvtxPattern.AUTO.match("kv_send " + B).orElseThrow();
    assertThat(send).isEqualTo(new RangeMatch(RangeMatch.KV_SEND, null, List.of(B.toLowerCase())));
    assertThat(send.isKvTransfer()).isTrue();
    assertThat(NvtxPattern.AUTO.match("kv_recv " + A))
        .contains(new RangeMatch(RangeMatch.KV_RECV, null, List.of(A)));
    assertThat(NvtxPattern.preset("kv-send").match("kv_send " + A)).isPresent();
    assertThat(NvtxPattern.AUTO.match("kv_send " + A + "," + B))
        .isEmpty(); // one request per transfer
    assertThat(NvtxPattern.AUTO.match("prefill " + A).orElseThrow().isKvTransfer()).isFalse();
  }

  @Test
  void userRegexNeedsATracesGroup() {
    NvtxPattern p =
        NvtxPattern.regex("step (?<kind>\\w+) for (?<traces>[0-9a-f]{32}( [0-9a-f]{32})*)");
    assertThat(p.match("step prefill for " + A + " " + A))
        .contains(new RangeMatch("prefill", null, List.of(A, A)));
    assertThatThrownBy(() -> NvtxPattern.regex("prefill (\\w+)"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> NvtxPattern.preset("nope")).hasMessageContaining("auto");
  }
}
