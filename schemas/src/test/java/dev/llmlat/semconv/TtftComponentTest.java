package dev.llmlat.semconv;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class TtftComponentTest {
  private static final Pattern INT64_COLUMN = Pattern.compile("\\b([A-Z][A-Za-z]*Ns) Int64\\b");

  /** The Int64 ...Ns columns the migrations give llm_request_attribution in {@code dir}. */
  private static Set<String> attributionColumns(Path dir) throws IOException {
    List<String> migrations = Files.readAllLines(dir.resolve("migrations.txt"));
    StringBuilder sql = new StringBuilder();
    for (String name : migrations) {
      String text = Files.readString(dir.resolve(name.trim()));
      if (text.contains("llm_request_attribution")) {
        sql.append(text).append('\n');
      }
    }
    Matcher m = INT64_COLUMN.matcher(sql);
    return m.results().map(r -> r.group(1)).collect(Collectors.toSet());
  }

  @Test
  void everyComponentHasItsColumnInBothLayouts() throws IOException {
    for (Path dir : List.of(Path.of("clickhouse"), Path.of("clickhouse/cluster"))) {
      Set<String> columns = attributionColumns(dir);
      assertThat(columns).as(dir + ": Int64 ...Ns columns of llm_request_attribution").isNotEmpty();
      for (TtftComponent c : TtftComponent.all()) {
        assertThat(columns).as(dir + ": the column of " + c.id()).contains(c.column());
      }
    }
  }

  @Test
  void columnsAndNamesCorrespond() {
    assertThat(TtftComponent.KV_TRANSFER.column()).isEqualTo("KvTransferNs");
    assertThat(TtftComponent.UPSTREAM_POOL_WAIT.column()).isEqualTo("UpstreamPoolWaitNs");
    assertThat(TtftComponent.byId("rank_wait")).contains(TtftComponent.RANK_WAIT);
    assertThat(TtftComponent.byId("ttft")).isEmpty();
  }

  @Test
  void everyComponentHasAColourOfItsOwn() {
    assertThat(TtftComponent.all().stream().map(TtftComponent::colour))
        .doesNotHaveDuplicates()
        .allMatch(c -> c.matches("#[0-9A-F]{6}"));
  }

  @Test
  void anEngineStepOutranksEveryComponentItIsNotSplitInto() {
    for (TtftComponent c : TtftComponent.all()) {
      assertThat(c.precedence()).as(c.id()).isLessThanOrEqualTo(TtftComponent.STEP_PRECEDENCE);
    }
    assertThat(TtftComponent.QUEUE.precedence())
        .as("a queued request's time is queue even while a gateway span covers it")
        .isGreaterThan(TtftComponent.GATEWAY_IN.precedence());
  }
}
