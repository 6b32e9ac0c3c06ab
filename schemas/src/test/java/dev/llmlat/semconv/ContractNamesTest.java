package dev.llmlat.semconv;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The contract is written once: no main source outside {@code schemas} spells an attribute, event,
 * span or topic name that {@code schemas} defines as a string literal; it uses the constant. Names
 * of one plain word ("decode", "client") are left out: as literals they mostly mean something else
 * (a step kind, a column value).
 */
class ContractNamesTest {
  private static final List<Class<?>> CONTRACT =
      List.of(LlmlatAttributes.class, LlmlatSpanNames.class, LlmlatTopics.class);

  /**
   * The contract's names that read as names: dotted keys, and the span and topic names with an
   * underscore.
   */
  private static Map<String, String> names() throws IllegalAccessException {
    Map<String, String> out = new LinkedHashMap<>();
    for (Class<?> c : CONTRACT) {
      for (Field f : c.getFields()) {
        if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
          String value = (String) f.get(null);
          if (value.contains(".") || value.contains("_")) {
            out.putIfAbsent(value, c.getSimpleName() + "." + f.getName());
          }
        }
      }
    }
    for (TtftComponent c : TtftComponent.all()) {
      if (c.id().contains("_")) {
        out.putIfAbsent(c.id(), "TtftComponent." + c.name());
      }
      out.putIfAbsent(c.column(), "TtftComponent." + c.name() + ".column()");
    }
    return out;
  }

  @Test
  void everyContractNameIsUsedThroughItsConstant() throws Exception {
    Map<String, String> names = names();
    assertThat(names)
        .containsKeys(
            LlmlatAttributes.TENANT,
            LlmlatSpanNames.REQUEST,
            LlmlatTopics.SPANS,
            TtftComponent.KV_TRANSFER.id(),
            TtftComponent.QUEUE.column());
    Path repo = Path.of("..").toAbsolutePath().normalize();
    Pattern literal = Pattern.compile("(?<![\\\\\\w])\"([A-Za-z][A-Za-z0-9_.]*)\"");
    List<String> found = new ArrayList<>();
    List<Path> sources;
    try (Stream<Path> walk = Files.walk(repo)) {
      sources =
          walk.filter(
                  p ->
                      p.toString().endsWith(".java")
                          && p.toString().contains("/src/main/java/")
                          && !p.startsWith(repo.resolve("schemas"))
                          && !p.toString().contains("/target/"))
              .toList();
    }
    assertThat(sources).as("main sources under " + repo).hasSizeGreaterThan(100);
    for (Path p : sources) {
      List<String> lines = read(p);
      for (int i = 0; i < lines.size(); i++) {
        Matcher m = literal.matcher(lines.get(i));
        while (m.find()) {
          String constant = names.get(m.group(1));
          if (constant != null) {
            found.add(
                repo.relativize(p) + ":" + (i + 1) + " \"" + m.group(1) + "\" is " + constant);
          }
        }
      }
    }
    assertThat(found).as("contract names spelled as literals").isEmpty();
  }

  private static List<String> read(Path p) {
    try {
      return Files.readAllLines(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
