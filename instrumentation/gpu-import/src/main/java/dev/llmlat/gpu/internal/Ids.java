package dev.llmlat.gpu.internal;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * Span and trace ids derived from the export and a sequence number, not drawn at random: importing
 * the same file twice yields the same ids, so the store's deduplication can drop the repeat.
 */
public final class Ids {
  private static final HexFormat HEX = HexFormat.of();

  private final long seed;

  public Ids(String identity) {
    long h = 0xcbf29ce484222325L;
    for (byte b : identity.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xff)) * 0x100000001b3L;
    }
    this.seed = mix(h);
  }

  /** splitmix64's finalizer: a bijection, so distinct inputs give distinct ids. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  public ByteString spanId(long kind, long n) {
    return ByteString.copyFrom(longBytes(spanIdBits(kind, n)));
  }

  /** {@link #spanId}'s eight bytes as a long, most significant byte first. */
  public long spanIdBits(long kind, long n) {
    long v = mix(seed + kind * 0x9e3779b97f4a7c15L + mix(n));
    return v == 0 ? 1 : v;
  }

  public ByteString traceId(long kind, long n) {
    long hi = mix(seed ^ mix(kind * 31 + n));
    long lo = mix(hi + n + kind);
    byte[] b = new byte[16];
    System.arraycopy(longBytes(hi), 0, b, 0, 8);
    System.arraycopy(longBytes(lo == 0 ? 1 : lo), 0, b, 8, 8);
    return ByteString.copyFrom(b);
  }

  private static byte[] longBytes(long v) {
    byte[] b = new byte[8];
    for (int i = 7; i >= 0; i--) {
      b[i] = (byte) v;
      v >>>= 8;
    }
    return b;
  }

  public static String hex(ByteString id) {
    return HEX.formatHex(id.toByteArray());
  }

  public static ByteString fromHex(String hex) {
    return ByteString.copyFrom(HEX.parseHex(hex));
  }
}
