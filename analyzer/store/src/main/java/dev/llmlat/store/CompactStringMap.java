package dev.llmlat.store;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * An immutable map of a few strings (a span's attributes) in one array of keys and values: two
 * objects where a {@link java.util.HashMap} makes one per entry plus its table, which a read of a
 * hundred thousand spans pays for in allocation and in the collector's copying. Lookups scan the
 * keys (a span has a handful); keys read as {@link RowBinaryReader#repeatedString} are the interned
 * constants callers look up, so most comparisons stop at identity.
 *
 * <p>It iterates in the order a {@code HashMap} sized as {@link RowBinaryReader} sized it would
 * (what readers of a span's entries saw before), and a repeated key keeps its last value, as a put
 * does.
 */
final class CompactStringMap extends AbstractMap<String, String> {
  /** The empty map (unlike {@code Map.of()}, a lookup of null is a miss, as in a HashMap). */
  static final Map<String, String> EMPTY = new CompactStringMap(new String[0]);

  /** Keys at even indexes, each one's value after it. */
  private final String[] entries;

  private CompactStringMap(String[] entries) {
    this.entries = entries;
  }

  /**
   * The map of {@code pairs} (key, value, key, value, ...; the first {@code 2 * n} elements, taken
   * over), as {@code new HashMap<>(n * 2)} and a put of each pair in turn would hold it.
   */
  static Map<String, String> of(String[] pairs, int n) {
    if (n == 0) {
      return EMPTY;
    }
    int size = 0;
    for (int i = 0; i < n; i++) {
      String key = pairs[2 * i];
      int at = indexOf(pairs, size, key);
      if (at >= 0) {
        pairs[2 * at + 1] = pairs[2 * i + 1]; // a later put replaces the value, keeps the place
      } else {
        pairs[2 * size] = key;
        pairs[2 * size + 1] = pairs[2 * i + 1];
        size++;
      }
    }
    String[] entries = pairs.length == 2 * size ? pairs : Arrays.copyOf(pairs, 2 * size);
    inHashMapOrder(entries, size, tableSize(n * 2));
    return new CompactStringMap(entries);
  }

  /** The table length of {@code new HashMap<>(capacity)} once it holds its first entry. */
  private static int tableSize(int capacity) {
    int n = -1 >>> Integer.numberOfLeadingZeros(capacity - 1);
    return n < 0 ? 1 : n >= (1 << 30) ? (1 << 30) : n + 1;
  }

  /**
   * Sorts the entries by their HashMap bucket, stably (a bucket's chain is in insertion order): the
   * table never grows, holding at most {@code n} of {@code 2n} slots.
   */
  private static void inHashMapOrder(String[] entries, int size, int table) {
    for (int i = 1; i < size; i++) {
      String key = entries[2 * i];
      String value = entries[2 * i + 1];
      int bucket = bucket(key, table);
      int j = i - 1;
      while (j >= 0 && bucket(entries[2 * j], table) > bucket) {
        entries[2 * j + 2] = entries[2 * j];
        entries[2 * j + 3] = entries[2 * j + 1];
        j--;
      }
      entries[2 * j + 2] = key;
      entries[2 * j + 3] = value;
    }
  }

  private static int bucket(String key, int table) {
    int h = key.hashCode();
    return (h ^ (h >>> 16)) & (table - 1);
  }

  private static int indexOf(String[] entries, int size, Object key) {
    for (int i = 0; i < size; i++) {
      String k = entries[2 * i];
      if (k == key || k.equals(key)) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public String get(Object key) {
    int at = indexOf(entries, entries.length / 2, key);
    return at < 0 ? null : entries[2 * at + 1];
  }

  @Override
  public String getOrDefault(Object key, String otherwise) {
    int at = indexOf(entries, entries.length / 2, key);
    return at < 0 ? otherwise : entries[2 * at + 1];
  }

  @Override
  public boolean containsKey(Object key) {
    return indexOf(entries, entries.length / 2, key) >= 0;
  }

  @Override
  public int size() {
    return entries.length / 2;
  }

  @Override
  public boolean isEmpty() {
    return entries.length == 0;
  }

  @Override
  public Set<Map.Entry<String, String>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public Iterator<Map.Entry<String, String>> iterator() {
        return new Iterator<>() {
          private int next;

          @Override
          public boolean hasNext() {
            return next < entries.length;
          }

          @Override
          public Map.Entry<String, String> next() {
            if (next >= entries.length) {
              throw new NoSuchElementException();
            }
            Map.Entry<String, String> e =
                new AbstractMap.SimpleImmutableEntry<>(entries[next], entries[next + 1]);
            next += 2;
            return e;
          }
        };
      }

      @Override
      public int size() {
        return entries.length / 2;
      }
    };
  }
}
