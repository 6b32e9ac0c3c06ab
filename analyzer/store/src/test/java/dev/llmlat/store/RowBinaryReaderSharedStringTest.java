package dev.llmlat.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RowBinaryReaderSharedStringTest {
  @Test
  void equalValuesComeBackAsOneObjectAndEveryValueAsWritten() {
    Random random = new Random(7);
    List<String> written = new ArrayList<>();
    RowBinaryWriter out = new RowBinaryWriter(1 << 16);
    for (int i = 0; i < 20_000; i++) {
      // hex ids of two lengths, many repeated, some empty, a few not ASCII
      String v =
          switch (random.nextInt(10)) {
            case 0 -> "";
            case 1 -> "é" + random.nextInt(50);
            default ->
                String.format("%032x", random.nextInt(3000))
                    .substring(random.nextBoolean() ? 0 : 16);
          };
      written.add(v);
      out.string(v).int64(-1); // bytes with the high bit set between the strings
    }
    RowBinaryReader in = new RowBinaryReader(out.toByteArray());
    List<String> read = new ArrayList<>();
    java.util.Map<String, String> first = new java.util.HashMap<>();
    for (int i = 0; i < written.size(); i++) {
      String s = in.sharedString();
      assertThat(in.int64()).isEqualTo(-1);
      read.add(s);
      assertThat(first.computeIfAbsent(s, k -> s)).isSameAs(s);
    }
    assertThat(read).isEqualTo(written);
    assertThat(in.hasMore()).isFalse();
  }
}
