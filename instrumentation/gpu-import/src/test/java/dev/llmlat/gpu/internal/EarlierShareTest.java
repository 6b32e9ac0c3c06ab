package dev.llmlat.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** How the importing thread and the reader divide the runtime rows between them. */
class EarlierShareTest {
  @Test
  void theH200CaptureTimesFortyGivesTheImportingThreadAboutThreeQuarters() {
    // 1,355,760 runtime rows, 512,560 activities (bench import --copies 40)
    assertThat(NsysImporter.earlierShare(1_355_760, 512_560, 512 * 1024))
        .isCloseTo(0.73, within(0.02));
  }

  @Test
  void fewRuntimeRowsAllGoToTheImportingThreadAndNoneIsAnEvenSplit() {
    assertThat(NsysImporter.earlierShare(1_000, 500_000, 512 * 1024)).isEqualTo(1.0);
    assertThat(NsysImporter.earlierShare(0, 500_000, 512 * 1024)).isEqualTo(0.5);
  }

  @Test
  void manyRuntimeRowsPerActivityTendToHalf() {
    assertThat(NsysImporter.earlierShare(100_000_000, 1_000, 512 * 1024))
        .isCloseTo(0.5, within(0.001));
  }

  @Test
  void theReaderIsNeverAheadByMoreThanItsQueueHolds() {
    // ten times the bench's export: balance would want ~0.73, a queue of 512 batches allows less
    double x = NsysImporter.earlierShare(13_557_600, 5_125_600, 512 * 1024);
    assertThat(x).isLessThan(0.6).isGreaterThan(0.5);
    assertThat(NsysImporter.earlierShare(13_557_600, 5_125_600, 4096 * 1024))
        .isCloseTo(0.73, within(0.02));
  }
}
