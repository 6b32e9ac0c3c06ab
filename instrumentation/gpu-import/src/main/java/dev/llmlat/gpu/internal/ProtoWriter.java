package dev.llmlat.gpu.internal;

import com.google.protobuf.ByteString;
import java.util.Arrays;

/**
 * Protobuf wire encoding into a growable array, for the few message shapes the importers write by
 * hand (kernel spans: hundreds of thousands per import, where building message objects cost as much
 * as reading the export). Fields must be written in field-number order and default values left out,
 * as protobuf-java does, so the bytes equal what it would write.
 */
final class ProtoWriter {
  private byte[] buf;
  private int pos;

  ProtoWriter(int capacity) {
    buf = new byte[capacity];
  }

  void reset() {
    pos = 0;
  }

  int size() {
    return pos;
  }

  byte[] array() {
    return buf;
  }

  private void ensure(int more) {
    if (pos + more > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + more));
    }
  }

  void rawByte(int b) {
    ensure(1);
    buf[pos++] = (byte) b;
  }

  void varint(long v) {
    ensure(10);
    byte[] b = buf;
    int p = pos;
    if ((v & ~0x3FFFL) == 0) { // one or two bytes: tags, lengths, most ids
      if ((v & ~0x7FL) == 0) {
        b[p] = (byte) v;
        pos = p + 1;
      } else {
        b[p] = (byte) ((v & 0x7F) | 0x80);
        b[p + 1] = (byte) (v >>> 7);
        pos = p + 2;
      }
      return;
    }
    while ((v & ~0x7FL) != 0) {
      b[p++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    b[p++] = (byte) v;
    pos = p;
  }

  void fixed64(long v) {
    ensure(8);
    byte[] b = buf;
    int p = pos;
    for (int i = 0; i < 8; i++) {
      b[p + i] = (byte) v;
      v >>>= 8;
    }
    pos = p + 8;
  }

  /** Eight bytes, most significant first: how span ids travel. */
  void longBigEndian(long v) {
    ensure(8);
    for (int i = 7; i >= 0; i--) {
      buf[pos + i] = (byte) v;
      v >>>= 8;
    }
    pos += 8;
  }

  void raw(byte[] b) {
    raw(b, 0, b.length);
  }

  void raw(byte[] b, int off, int len) {
    ensure(len);
    System.arraycopy(b, off, buf, pos, len);
    pos += len;
  }

  void raw(ByteString b) {
    ensure(b.size());
    b.copyTo(buf, pos);
    pos += b.size();
  }

  /** A length-delimited field: tag, length, bytes. */
  void lengthDelimited(int tag, byte[] b, int off, int len) {
    if (tag < 0x80
        && len < 0x4000) { // the usual case: a one-byte tag, a length of one or two bytes
      ensure(len + (len < 0x80 ? 2 : 3)); // exactly: records are written into arrays of their size
      buf[pos++] = (byte) tag;
      if (len < 0x80) {
        buf[pos++] = (byte) len;
      } else {
        buf[pos++] = (byte) ((len & 0x7F) | 0x80);
        buf[pos++] = (byte) (len >>> 7);
      }
    } else {
      varint(tag);
      varint(len);
      ensure(len);
    }
    System.arraycopy(b, off, buf, pos, len);
    pos += len;
  }

  static int varintSize(long v) {
    return v == 0 ? 1 : (63 - Long.numberOfLeadingZeros(v)) / 7 + 1;
  }

  /** The tag of field {@code number} with wire type 2 (length-delimited). */
  static int lenTag(int number) {
    return number << 3 | 2;
  }
}
