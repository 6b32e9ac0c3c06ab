package dev.llmlat.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kinds the report ranks stall causes by, computed by the store's engine over causes as
 * attribution writes them.
 */
class StallCausesTest {
  @TempDir Path dir;

  @Test
  void causesOfAKindFormOneGroupWhateverTheirFiguresAndNotes() {
    List<String> causes =
        List.of(
            "the gateway could not write to its client (the client read slowly), 35.0 ms",
            "the gateway could not write to its client (the client read slowly), 120.4 ms",
            "the gateway could not write to its client (the request's HTTP/2 stream window was full: the client read slowly), 41.0 ms",
            "the gateway could not write to its client (the request's HTTP/2 stream window was full: the client read slowly), 8.2 ms",
            "the gateway could not write to its client (its socket to the client was full: the client read slowly), 77.7 ms",
            "slow step (60.0 ms); only the first 32 of the gateway's 40 blocks writing to its client were recorded, 60.0 ms of blocking after them is not placed",
            "slow step (12.5 ms)",
            "stalled by prefill of request 4bf9 (812 tokens)",
            "preempted; only the first 32 of the gateway's 33 blocks writing to its client were recorded, later ones are not placed",
            "preempted");
    StringBuilder values = new StringBuilder();
    for (String c : causes) {
      values
          .append(values.length() == 0 ? "" : ", ")
          .append('\'')
          .append(c.replace("'", "''"))
          .append('\'');
    }
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      List<List<String>> rows =
          store
              .query(
                  "SELECT "
                      + StallCauses.KIND_SQL
                      + " AS c, count() AS n FROM (SELECT arrayJoin(["
                      + values
                      + "]) AS TopStallCause) GROUP BY c ORDER BY n DESC, c",
                  Map.of())
              .rows();
      assertThat(rows)
          .containsExactly(
              List.of("preempted", "2"),
              List.of("slow step", "2"),
              List.of("the gateway could not write to its client (HTTP/2 stream window full)", "2"),
              List.of("the gateway could not write to its client (slow reader)", "2"),
              List.of("stalled by another request's prefill", "1"),
              List.of("the gateway could not write to its client (socket full)", "1"));
    }
  }
}
