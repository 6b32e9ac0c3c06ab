package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CpuPinningTest {
  @Test
  void parsesTasksetLists() {
    assertThat(CpuPinning.parse("1")).containsExactly(1);
    assertThat(CpuPinning.parse("0,2-4, 7")).containsExactly(0, 2, 3, 4, 7);
    assertThatThrownBy(() -> CpuPinning.parse("2-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a CPU list");
    assertThatThrownBy(() -> CpuPinning.parse("one"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("one");
  }

  @Test
  void splitsTheAllowedCpusIntoTwoDisjointHalves() throws Exception {
    List<Integer> allowed = CpuPinning.allowedCpus();
    assertThat(allowed).isNotEmpty();
    Optional<CpuPinning> halves = CpuPinning.halves();
    if (allowed.size() < 2) {
      assertThat(halves).isEmpty();
      return;
    }
    CpuPinning p = halves.orElseThrow();
    List<Integer> measured = CpuPinning.parse(p.measured());
    List<Integer> others = CpuPinning.parse(p.others());
    assertThat(measured).doesNotContainAnyElementsOf(others);
    List<Integer> both = new ArrayList<>(others);
    both.addAll(measured);
    assertThat(both).containsExactlyInAnyOrderElementsOf(allowed);
    assertThat(p.measuredLauncher()).containsExactly("taskset", "-c", p.measured());
  }

  @Test
  void refusesCpusThisProcessMayNotUseOrThatLeaveNothingForTheRest() throws Exception {
    List<Integer> allowed = CpuPinning.allowedCpus();
    int notAllowed = allowed.get(allowed.size() - 1) + 1;
    assertThatThrownBy(() -> CpuPinning.of(Integer.toString(notAllowed)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--gateway-cpus " + notAllowed)
        .hasMessageContaining("may only use CPUs");
    StringBuilder all = new StringBuilder();
    for (int c : allowed) {
      all.append(all.length() == 0 ? "" : ",").append(c);
    }
    assertThatThrownBy(() -> CpuPinning.of(all.toString()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaves no CPU");
  }
}
