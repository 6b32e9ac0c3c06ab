package dev.llmlat.ebpf;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The function symbols of one ELF64 little-endian file ({@code .symtab} and {@code .dynsym}) and
 * its loadable segments: enough to name a code address and to check what a library exports, without
 * binutils.
 */
public final class ElfSymbols {
  private static final int SHT_SYMTAB = 2;
  private static final int SHT_DYNSYM = 11;
  private static final int STT_FUNC = 2;
  private static final int STT_GNU_IFUNC = 10;
  private static final int PT_LOAD = 1;

  private record Symbol(long value, long size, String name) {}

  private record Segment(long offset, long vaddr, long fileSize) {}

  private final Path path;
  private final Symbol[] functions;
  private final Set<String> exported;
  private final List<Segment> segments;

  private ElfSymbols(Path path, Symbol[] functions, Set<String> exported, List<Segment> segments) {
    this.path = path;
    this.functions = functions;
    this.exported = exported;
    this.segments = segments;
  }

  /**
   * @throws IOException when the file cannot be read or is not an ELF64 little-endian file
   */
  public static ElfSymbols read(Path path) throws IOException {
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
      ByteBuffer b = m.order(ByteOrder.LITTLE_ENDIAN);
      if (b.limit() < 64 || b.getInt(0) != 0x464c457f || b.get(4) != 2 || b.get(5) != 1) {
        throw new IOException(path + " is not an ELF64 little-endian file");
      }
      long phoff = b.getLong(0x20);
      long shoff = b.getLong(0x28);
      int phentsize = Short.toUnsignedInt(b.getShort(0x36));
      int phnum = Short.toUnsignedInt(b.getShort(0x38));
      int shentsize = Short.toUnsignedInt(b.getShort(0x3A));
      int shnum = Short.toUnsignedInt(b.getShort(0x3C));

      List<Segment> segments = new ArrayList<>();
      for (int i = 0; i < phnum; i++) {
        int ph = (int) (phoff + (long) i * phentsize);
        if (b.getInt(ph) == PT_LOAD) {
          segments.add(new Segment(b.getLong(ph + 8), b.getLong(ph + 16), b.getLong(ph + 32)));
        }
      }

      List<Symbol> functions = new ArrayList<>();
      Set<String> exported = new HashSet<>();
      for (int i = 0; i < shnum; i++) {
        int sh = (int) (shoff + (long) i * shentsize);
        int type = b.getInt(sh + 4);
        if (type != SHT_SYMTAB && type != SHT_DYNSYM) {
          continue;
        }
        long off = b.getLong(sh + 0x18);
        long size = b.getLong(sh + 0x20);
        int link = b.getInt(sh + 0x28);
        long entsize = Math.max(24, b.getLong(sh + 0x38));
        int str = (int) (shoff + (long) link * shentsize);
        long strOff = b.getLong(str + 0x18);
        for (long s = off; s + 24 <= off + size; s += entsize) {
          int nameIdx = b.getInt((int) s);
          int info = b.get((int) s + 4) & 0xff;
          int shndx = Short.toUnsignedInt(b.getShort((int) s + 6));
          long value = b.getLong((int) s + 8);
          long symSize = b.getLong((int) s + 16);
          int symType = info & 0xf;
          if (shndx == 0 || (symType != STT_FUNC && symType != STT_GNU_IFUNC) || nameIdx == 0) {
            continue;
          }
          String name = cString(b, (int) (strOff + nameIdx));
          functions.add(new Symbol(value, symSize, name));
          if (type == SHT_DYNSYM) {
            exported.add(name);
          }
        }
      }
      Symbol[] sorted = functions.toArray(Symbol[]::new);
      Arrays.sort(sorted, Comparator.comparingLong(Symbol::value));
      return new ElfSymbols(path, sorted, Set.copyOf(exported), List.copyOf(segments));
    } catch (IndexOutOfBoundsException e) {
      throw new IOException(path + ": truncated or corrupt ELF file", e);
    }
  }

  private static String cString(ByteBuffer b, int at) {
    int end = at;
    while (end < b.limit() && b.get(end) != 0) {
      end++;
    }
    byte[] bytes = new byte[end - at];
    b.get(at, bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  public Path path() {
    return path;
  }

  /**
   * Whether the dynamic symbol table defines function {@code name} (what a uprobe can attach to by
   * name).
   */
  public boolean exports(String name) {
    return exported.contains(name);
  }

  /**
   * The link-time address a byte at {@code fileOffset} is loaded at, when a loadable segment holds
   * it.
   */
  public Optional<Long> vaddrOfFileOffset(long fileOffset) {
    for (Segment s : segments) {
      if (fileOffset >= s.offset && fileOffset < s.offset + Math.max(s.fileSize, 1)) {
        return Optional.of(fileOffset - s.offset + s.vaddr);
      }
    }
    return Optional.empty();
  }

  /** The function whose code holds link-time address {@code vaddr} (or starts exactly there). */
  public Optional<String> functionAt(long vaddr) {
    int lo = 0;
    int hi = functions.length - 1;
    int best = -1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (functions[mid].value <= vaddr) {
        best = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    // Several symbols may share an address (aliases): any of them that covers vaddr will do.
    for (int i = best; i >= 0 && i > best - 8; i--) {
      Symbol s = functions[i];
      if (s.value == vaddr || vaddr < s.value + s.size) {
        return Optional.of(s.name);
      }
    }
    return Optional.empty();
  }
}
