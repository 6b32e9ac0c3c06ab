package dev.llmlat.store;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Points the process's standard input at /dev/null. chDB 26.5 reads an INSERT's data from the
 * process's stdin whenever stdin has data waiting, even for INSERT ... VALUES and FROM INFILE
 * (measured: a piped line ended up as a row, and VALUES inserts failed with code 48), so a server
 * answering clients must not have a stdin anyone can write to.
 */
public final class ProcessStdin {
  private ProcessStdin() {}

  public static void detach() {
    Linker linker = Linker.nativeLinker();
    try (Arena arena = Arena.ofConfined()) {
      MethodHandle open =
          linker.downcallHandle(
              linker.defaultLookup().find("open").orElseThrow(),
              FunctionDescriptor.of(
                  ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
      MethodHandle dup2 =
          linker.downcallHandle(
              linker.defaultLookup().find("dup2").orElseThrow(),
              FunctionDescriptor.of(
                  ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
      MethodHandle close =
          linker.downcallHandle(
              linker.defaultLookup().find("close").orElseThrow(),
              FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
      MemorySegment path = arena.allocateFrom("/dev/null");
      int fd = (int) open.invokeExact(path, 0); // O_RDONLY
      if (fd < 0) {
        throw new StoreException("cannot open /dev/null to detach the store's standard input");
      }
      if (fd != 0) {
        int dup = (int) dup2.invokeExact(fd, 0);
        int ignored = (int) close.invokeExact(fd);
        if (dup < 0) {
          throw new StoreException("cannot detach the store's standard input (dup2 failed)");
        }
      }
    } catch (StoreException e) {
      throw e;
    } catch (Throwable t) {
      throw new StoreException("cannot detach the store's standard input: " + t, t);
    }
  }
}
