package dev.llmlat.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CompactStringMapTest {
  /** What the reader built before: a HashMap sized for the pairs, each put in turn. */
  private static Map<String, String> hashMapOf(String[] pairs, int n) {
    Map<String, String> map = new HashMap<>(n * 2);
    for (int i = 0; i < n; i++) {
      map.put(pairs[2 * i], pairs[2 * i + 1]);
    }
    return map;
  }

  @Test
  void holdsAndIteratesWhatAHashMapOfTheSamePutsHolds() {
    Random random = new Random(42);
    List<String> names = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      names.add("llmlat.attr." + Integer.toString(random.nextInt(1 << 20), 36));
    }
    for (int round = 0; round < 2000; round++) {
      int n = 1 + random.nextInt(24);
      String[] pairs = new String[2 * n];
      for (int i = 0; i < n; i++) {
        pairs[2 * i] = names.get(random.nextInt(names.size())); // repeats: the last value wins
        pairs[2 * i + 1] = "v" + random.nextInt(1000);
      }
      Map<String, String> expected = hashMapOf(pairs, n);
      Map<String, String> compact = CompactStringMap.of(pairs.clone(), n);
      assertThat(compact).isEqualTo(expected);
      assertThat(compact.hashCode()).isEqualTo(expected.hashCode());
      assertThat(new ArrayList<>(compact.entrySet()))
          .as("iteration order")
          .isEqualTo(new ArrayList<>(expected.entrySet()));
      for (String name : names) {
        // equal keys that are other objects are found too
        String copy = new String(name.toCharArray());
        assertThat(compact.get(copy)).isEqualTo(expected.get(name));
        assertThat(compact.containsKey(copy)).isEqualTo(expected.containsKey(name));
        assertThat(compact.getOrDefault(copy, "")).isEqualTo(expected.getOrDefault(name, ""));
      }
    }
  }

  @Test
  void emptyAnswersEveryLookupAsMissingAndRefusesWrites() {
    Map<String, String> empty = CompactStringMap.of(new String[0], 0);
    assertThat(empty).isEmpty();
    assertThat(empty.get(null)).isNull();
    assertThat(empty.containsKey(null)).isFalse();
    assertThat(empty.getOrDefault("a", "x")).isEqualTo("x");
    Map<String, String> one = CompactStringMap.of(new String[] {"a", "1"}, 1);
    assertThat(one.get(null)).isNull();
    assertThatThrownBy(() -> one.put("b", "2")).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void readerMapsAreCompactAndKeepTheLastValueOfARepeatedKey() {
    RowBinaryWriter out = new RowBinaryWriter(64);
    out.varUInt(3).string("k").string("1").string("j").string("2").string("k").string("3");
    out.varUInt(0);
    RowBinaryReader in = new RowBinaryReader(out.toByteArray());
    Map<String, String> map = in.stringMap();
    assertThat(map)
        .isInstanceOf(CompactStringMap.class)
        .containsOnly(Map.entry("k", "3"), Map.entry("j", "2"));
    assertThat(in.stringMap()).isEmpty();
    assertThat(in.hasMore()).isFalse();
  }
}
