package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.gpu.GpuSummary;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * {@code llmlat gpu-summary} over tensor-parallel ranks, and a single rank printed as it always
 * was.
 */
class GpuSummaryCollectivesTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static Path traces(String relative) {
    return dev.llmlat.sharedtraces.SharedTraces.resolve(relative);
  }

  @Test
  void tensorParallelNsysExportGainsPerDeviceCollectives() throws Exception {
    String file = traces("h200x2-tp/tp.sqlite").toString();
    LlmlatCliTest.Run text = LlmlatCliTest.run("gpu-summary", file);
    assertThat(text.exit()).as(text.err()).isZero();
    assertThat(text.out())
        .contains("collectives across 2 devices: 2,530 matched")
        .contains("collective_ms")
        .contains("wait_ms")
        .contains("overlap_ms")
        .contains("stragglers: 20 of 44 steps");
    LlmlatCliTest.Run json = LlmlatCliTest.run("gpu-summary", file, "--format", "json");
    assertThat(json.exit()).as(json.err()).isZero();
    JsonNode c = JSON.readTree(json.out()).get("collectives");
    assertThat(c.get("devices")).hasSize(2);
    assertThat(c.get("devices").get(1).get("wait_ms").asDouble()).isGreaterThan(0);
    assertThat(c.get("steps")).hasSize(44); // 43 steps and the collectives outside them
  }

  @Test
  void kinetoTracesOfTwoRanksTogether() throws Exception {
    String r0 = traces("public/kineto__hta_sampled_rank-0.json.gz").toString();
    String r1 = traces("public/kineto__hta_sampled_rank-1.json.gz").toString();
    LlmlatCliTest.Run json = LlmlatCliTest.run("gpu-summary", r0, r1, "--format", "json");
    assertThat(json.exit()).as(json.err()).isZero();
    JsonNode doc = JSON.readTree(json.out());
    assertThat(doc.get("files")).hasSize(2);
    JsonNode devices = doc.get("collectives").get("devices");
    assertThat(devices.get(0).get("matched").asLong())
        .isEqualTo(devices.get(1).get("matched").asLong())
        .isEqualTo(10);
    assertThat(Double.isFinite(devices.get(1).get("clock_offset_ms").asDouble())).isTrue();
    LlmlatCliTest.Run text = LlmlatCliTest.run("gpu-summary", r0, r1);
    assertThat(text.exit()).as(text.err()).isZero();
    assertThat(text.out()).contains(r0 + " (").contains(r1 + " (").contains("ProfilerStep#551");
  }

  @Test
  void singleRankExportPrintsAsBefore() throws Exception {
    Path f = traces("public/kineto__hta_nccl_data_rank0.json.gz"); // NCCL kernels, one rank
    LlmlatCliTest.Run json = LlmlatCliTest.run("gpu-summary", f.toString(), "--format", "json");
    assertThat(json.exit()).as(json.err()).isZero();
    assertThat(json.out().strip()).isEqualTo(GpuSummary.of(f).toJson());
    LlmlatCliTest.Run text = LlmlatCliTest.run("gpu-summary", f.toString());
    assertThat(text.exit()).as(text.err()).isZero();
    GpuSummary s = GpuSummary.of(f);
    assertThat(text.out())
        .startsWith(
            String.format(
                "%s (%s)%n  total %.3f ms", s.file(), s.format().source(), s.totalNs() / 1e6))
        .doesNotContain("collectives")
        .doesNotContain("straggler");
  }
}
