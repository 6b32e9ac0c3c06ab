package dev.llmlat.semconv;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class CollectiveKernelsTest {
  @Test
  void recognisesNcclAndCustomAllReduceKernels() {
    assertThat(CollectiveKernels.matches("ncclDevKernel_AllReduce_Sum_bf16_RING_LL")).isTrue();
    assertThat(
            CollectiveKernels.matches(
                "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"))
        .isTrue();
    assertThat(
            CollectiveKernels.matches(
                "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(vllm::RankData*)"))
        .isTrue();
    assertThat(CollectiveKernels.matches("cross_device_reduce_2stage")).isTrue();
    assertThat(
            CollectiveKernels.matches("void cross_device_reduce_2stage<float, 8>(RankData*, int)"))
        .isTrue();
    assertThat(CollectiveKernels.matches("void at::native::reduce_kernel<512, 1, ncclKernel_x>()"))
        .isFalse();
    assertThat(CollectiveKernels.matches("splitKreduce_kernel")).isFalse();
    assertThat(CollectiveKernels.matches("my_nccl_helper")).isFalse();
    assertThat(CollectiveKernels.matches(null)).isFalse();
  }

  /**
   * The store's collectives table is filled by this class's rule, written out in the migration's
   * SQL.
   */
  @Test
  void theCollectivesViewFiltersByTheSameRule() throws Exception {
    String rule = CollectiveKernels.sqlSuperset("Name");
    // single node: the copy of the kernels already stored and the view; cluster: the view
    assertThat(
            Files.readString(Path.of("clickhouse/0017_gpu_collectives.sql"))
                .split(java.util.regex.Pattern.quote(rule), -1))
        .hasSize(3);
    assertThat(
            Files.readString(Path.of("clickhouse/cluster/0017_gpu_collectives.sql"))
                .split(java.util.regex.Pattern.quote(rule), -1))
        .hasSize(2);
  }
}
