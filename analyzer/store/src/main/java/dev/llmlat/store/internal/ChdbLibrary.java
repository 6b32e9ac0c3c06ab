package dev.llmlat.store.internal;

import dev.llmlat.store.StoreException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The C API of {@code libchdb.so}, bound once per process through {@code java.lang.foreign}.
 * Signatures as in chdb.h of chDB 26.5.
 */
public final class ChdbLibrary {
  private static final Map<Path, ChdbLibrary> LOADED = new HashMap<>();

  final MethodHandle connect; // chdb_connection* chdb_connect(int argc, char** argv)
  final MethodHandle closeConn; // void chdb_close_conn(chdb_connection* conn)
  final MethodHandle queryN; // chdb_result* chdb_query_n(conn, sql, len, format, len)
  // chdb_result* chdb_query_with_params_n(conn, sql, len, format, len, names, name_lens, values,
  // value_lens, count)
  final MethodHandle queryWithParamsN;
  final MethodHandle streamQueryWithParamsN; // same arguments; a handle to fetch chunks from
  final MethodHandle streamQueryN; // chdb_result* chdb_stream_query_n(conn, sql, len, format, len)
  final MethodHandle streamFetchResult; // chdb_result* chdb_stream_fetch_result(conn, stream)
  final MethodHandle streamCancelQuery; // void chdb_stream_cancel_query(conn, stream)
  final MethodHandle resultBuffer; // char* chdb_result_buffer(chdb_result*)
  final MethodHandle resultLength; // size_t chdb_result_length(chdb_result*)
  final MethodHandle resultError; // const char* chdb_result_error(chdb_result*)
  final MethodHandle resultRowsRead; // uint64_t chdb_result_rows_read(chdb_result*)
  final MethodHandle resultBytesRead; // uint64_t chdb_result_bytes_read(chdb_result*)
  final MethodHandle resultRowsWritten; // uint64_t chdb_result_rows_written(chdb_result*)
  final MethodHandle resultBytesWritten; // uint64_t chdb_result_bytes_written(chdb_result*)
  final MethodHandle resultElapsed; // double chdb_result_elapsed(chdb_result*)
  final MethodHandle resultStorageRowsRead; // uint64_t chdb_result_storage_rows_read(chdb_result*)
  final MethodHandle
      resultStorageBytesRead; // uint64_t chdb_result_storage_bytes_read(chdb_result*)
  final MethodHandle destroyResult; // void chdb_destroy_query_result(chdb_result*)
  final MethodHandle setSignalHandlersEnabled; // void chdb_set_signal_handlers_enabled(int)

  private ChdbLibrary(SymbolLookup lib) {
    Linker linker = Linker.nativeLinker();
    ValueLayout ptr = ValueLayout.ADDRESS;
    ValueLayout size = ValueLayout.JAVA_LONG;
    connect =
        bind(linker, lib, "chdb_connect", FunctionDescriptor.of(ptr, ValueLayout.JAVA_INT, ptr));
    closeConn = bind(linker, lib, "chdb_close_conn", FunctionDescriptor.ofVoid(ptr));
    queryN =
        bind(linker, lib, "chdb_query_n", FunctionDescriptor.of(ptr, ptr, ptr, size, ptr, size));
    FunctionDescriptor withParams =
        FunctionDescriptor.of(ptr, ptr, ptr, size, ptr, size, ptr, ptr, ptr, ptr, size);
    queryWithParamsN = bind(linker, lib, "chdb_query_with_params_n", withParams);
    streamQueryWithParamsN = bind(linker, lib, "chdb_stream_query_with_params_n", withParams);
    streamQueryN =
        bind(
            linker,
            lib,
            "chdb_stream_query_n",
            FunctionDescriptor.of(ptr, ptr, ptr, size, ptr, size));
    streamFetchResult =
        bind(linker, lib, "chdb_stream_fetch_result", FunctionDescriptor.of(ptr, ptr, ptr));
    streamCancelQuery =
        bind(linker, lib, "chdb_stream_cancel_query", FunctionDescriptor.ofVoid(ptr, ptr));
    resultBuffer = bind(linker, lib, "chdb_result_buffer", FunctionDescriptor.of(ptr, ptr));
    resultLength = bind(linker, lib, "chdb_result_length", FunctionDescriptor.of(size, ptr));
    resultError = bind(linker, lib, "chdb_result_error", FunctionDescriptor.of(ptr, ptr));
    resultRowsRead = bind(linker, lib, "chdb_result_rows_read", FunctionDescriptor.of(size, ptr));
    resultBytesRead = bind(linker, lib, "chdb_result_bytes_read", FunctionDescriptor.of(size, ptr));
    resultRowsWritten =
        bind(linker, lib, "chdb_result_rows_written", FunctionDescriptor.of(size, ptr));
    resultBytesWritten =
        bind(linker, lib, "chdb_result_bytes_written", FunctionDescriptor.of(size, ptr));
    resultElapsed =
        bind(
            linker,
            lib,
            "chdb_result_elapsed",
            FunctionDescriptor.of(ValueLayout.JAVA_DOUBLE, ptr));
    resultStorageRowsRead =
        bind(linker, lib, "chdb_result_storage_rows_read", FunctionDescriptor.of(size, ptr));
    resultStorageBytesRead =
        bind(linker, lib, "chdb_result_storage_bytes_read", FunctionDescriptor.of(size, ptr));
    destroyResult = bind(linker, lib, "chdb_destroy_query_result", FunctionDescriptor.ofVoid(ptr));
    setSignalHandlersEnabled =
        bind(
            linker,
            lib,
            "chdb_set_signal_handlers_enabled",
            FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT));
  }

  void destroyQueryResult(MemorySegment result) throws Throwable {
    destroyResult.invokeExact(result);
  }

  /** Loads the library at {@code path}, or explains why it cannot. */
  public static synchronized ChdbLibrary load(Path path) {
    Path key = path.toAbsolutePath().normalize();
    ChdbLibrary loaded = LOADED.get(key);
    if (loaded != null) {
      return loaded;
    }
    if (!Files.isRegularFile(key)) {
      throw new StoreException(
          "embedded ClickHouse engine library not found at "
              + key
              + ": run scripts/fetch-chdb (./llmlat does it on first use) or set LLMLAT_CHDB_LIB");
    }
    SymbolLookup lookup;
    try {
      lookup = SymbolLookup.libraryLookup(key, Arena.global());
    } catch (IllegalArgumentException | IllegalCallerException e) {
      throw new StoreException(
          "cannot load the embedded ClickHouse engine " + key + ": " + e.getMessage(), e);
    }
    loaded = new ChdbLibrary(lookup);
    LOADED.put(key, loaded);
    return loaded;
  }

  private static MethodHandle bind(
      Linker linker, SymbolLookup lib, String name, FunctionDescriptor fd) {
    MemorySegment symbol =
        lib.find(name)
            .orElseThrow(
                () ->
                    new StoreException("libchdb has no symbol " + name + ": wrong chDB version?"));
    return linker.downcallHandle(symbol, fd);
  }
}
