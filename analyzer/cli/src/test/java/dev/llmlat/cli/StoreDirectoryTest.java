package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.testing.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A directory a user names is opened as a store, never made into one, unless the command writes and
 * it is empty or new.
 */
class StoreDirectoryTest {
  /**
   * The threads that open a store ahead ({@code EmbeddedClickHouse.openAhead}) and bind the
   * engine's library.
   */
  private static final Set<String> WARM_UP_THREADS =
      Set.of("llmlat-store-open-ahead", "llmlat-engine-warm-up");

  @TempDir Path dir;

  /** Every command that reads a store, on {@code data}. */
  private static List<String[]> readers(Path data, Path other) {
    String d = data.toString();
    return List.of(
        new String[] {"sql", "--data-dir", d, "SELECT 1"},
        new String[] {"report", "--data-dir", d},
        new String[] {"explain", "--data-dir", d, "0af7651916cd43dd8448eb211c80319c"},
        new String[] {"analyze", "--data-dir", d},
        new String[] {
          "export",
          "perfetto",
          "--data-dir",
          d,
          "0af7651916cd43dd8448eb211c80319c",
          "-o",
          other.resolveSibling("t.json").toString()
        },
        new String[] {"diff", "--a-store", d, "--b-store", other.toString()},
        new String[] {"diff", "--a-store", other.toString(), "--b-store", d});
  }

  private static List<String> tree(Path d) throws IOException {
    if (!Files.exists(d)) {
      return List.of("(absent)");
    }
    try (Stream<Path> s = Files.walk(d)) {
      return s.map(p -> d.relativize(p).toString()).sorted().toList();
    }
  }

  private static void refusedUnchanged(String[] args, Path data, String why) throws IOException {
    List<String> before = tree(data);
    LlmlatCliTest.Run r = LlmlatCliTest.run(args);
    String command = String.join(" ", args);
    assertThat(r.exit()).as(command + ": " + r.err()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(r.err()).as(command).contains(data.toString()).contains(why);
    assertThat(r.err().strip().lines()).as(command).hasSize(1);
    assertThat(tree(data)).as(command + ": the directory is as it was").isEqualTo(before);
  }

  @Test
  void readingCommandsRefuseADirectoryThatIsNoStoreAndLeaveItAsItWas() throws IOException {
    Path notes = Files.createDirectory(dir.resolve("notes"));
    Files.writeString(notes.resolve("todo.txt"), "not a store");
    Path empty = Files.createDirectory(dir.resolve("empty"));
    Path missing = dir.resolve("missing");
    Path store = LlmlatCliTest.store(dir.resolve("store"));
    for (String[] args : readers(notes, store)) {
      refusedUnchanged(args, notes, "is not an llmlat store");
    }
    for (String[] args : readers(empty, store)) {
      refusedUnchanged(args, empty, "is an empty directory, not an llmlat store");
    }
    for (String[] args : readers(missing, store)) {
      refusedUnchanged(args, missing, "no such directory");
    }
    LlmlatCliTest.Run ok =
        LlmlatCliTest.run(
            "sql",
            "--data-dir",
            store.toString(),
            "--format",
            "tsv",
            "SELECT count() FROM otel_traces");
    assertThat(ok.exit()).as(ok.err()).isZero();
    assertThat(ok.out()).isEqualTo("count()\n0\n");
  }

  @Test
  void writingCommandsMakeAStoreOnlyInAnEmptyOrNewDirectory() throws IOException {
    Path notes = Files.createDirectory(dir.resolve("notes"));
    Files.writeString(notes.resolve("todo.txt"), "not a store");
    Path spans = dir.resolve("spans.otlp.jsonl");
    Files.writeString(
        spans,
        "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"svc\"}}]},"
            + "\"scopeSpans\":[{\"spans\":[{\"traceId\":\"0af7651916cd43dd8448eb211c80319c\",\"spanId\":\"00f067aa0ba902b7\",\"name\":\"s\","
            + "\"kind\":1,\"startTimeUnixNano\":\"1795970300000000000\",\"endTimeUnixNano\":\"1795970300000000500\"}]}]}]}\n");
    refusedUnchanged(
        new String[] {"migrate", "--data-dir", notes.toString()},
        notes,
        "is not empty and not an llmlat store");
    refusedUnchanged(
        new String[] {
          "import", "otlp-json", spans.toString(), "--to", "store", "--data-dir", notes.toString()
        },
        notes,
        "is not empty and not an llmlat store");

    Path empty = Files.createDirectory(dir.resolve("empty"));
    LlmlatCliTest.Run made = LlmlatCliTest.run("migrate", "--data-dir", empty.toString());
    assertThat(made.exit()).as(made.err()).isZero();
    assertThat(StoreDirectory.isStore(empty)).isTrue();
    LlmlatCliTest.Run imported =
        LlmlatCliTest.run(
            "import",
            "otlp-json",
            spans.toString(),
            "--to",
            "store",
            "--data-dir",
            dir.resolve("new").toString());
    assertThat(imported.exit()).as(imported.err()).isZero();
    assertThat(StoreDirectory.isStore(dir.resolve("new"))).isTrue();
    // and what they made, the readers read
    LlmlatCliTest.Run read = LlmlatCliTest.run("report", "--data-dir", empty.toString());
    assertThat(read.exit()).as(read.err()).isZero();
  }

  /** The warm-up opens stores ahead on a thread of its own: not one that is none. */
  @Test
  void theWarmUpMakesNoStoreEither() throws Exception {
    Path notes = Files.createDirectory(dir.resolve("notes"));
    Files.writeString(notes.resolve("todo.txt"), "not a store");
    Path empty = Files.createDirectory(dir.resolve("empty"));
    List<String> before = tree(notes);
    EngineWarmUp.startFor(new String[] {"sql", "--data-dir", notes.toString(), "SELECT 1"});
    EngineWarmUp.startFor(new String[] {"report", "--data-dir=" + empty});
    // what the warm-up starts, it starts before it returns: once those threads are done, all they
    // did shows
    Await.until(
        () ->
            Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> WARM_UP_THREADS.contains(t.getName())),
        "the warm-up's threads to end",
        120);
    assertThat(tree(notes)).isEqualTo(before);
    assertThat(tree(empty)).containsExactly("");
  }
}
