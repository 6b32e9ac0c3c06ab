package dev.llmlat.semconv;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CollectiveKernelsTest {
  @Test
  void recognisesNcclAndCustomAllReduceKernels() {
    assertThat(CollectiveKernels.matches("ncclDevKernel_AllReduce_Sum_bf16_RING_LL")).isTrue();
    assertThat(CollectiveKernels.matches("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"))
        .isTrue();
    assertThat(CollectiveKernels.matches("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(vllm::RankData*)"))
        .isTrue();
    assertThat(CollectiveKernels.matches("cross_device_reduce_2stage")).isTrue();
    assertThat(CollectiveKernels.matches("void cross_device_reduce_2stage<float, 8>(RankData*, int)")).isTrue();
    assertThat(CollectiveKernels.matches("void at::native::reduce_kernel<512, 1, ncclKernel_x>()")).isFalse();
    assertThat(CollectiveKernels.matches("splitKreduce_kernel")).isFalse();
    assertThat(CollectiveKernels.matches("my_nccl_helper")).isFalse();
    assertThat(CollectiveKernels.matches(null)).isFalse();
  }
}
