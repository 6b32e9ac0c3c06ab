package dev.llmlat.gpu;

import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteOpenMode;

/**
 * How every connection to an Nsight Systems export is opened: by the importer, and by the baseline
 * `llmlat bench import` compares it with (so the two cannot drift apart).
 */
public final class NsysConnections {
  private NsysConnections() {}

  public static SQLiteConfig config() {
    SQLiteConfig config = new SQLiteConfig();
    config.setReadOnly(true); // never touch the user's export
    // Multi-thread mode: no sqlite mutex around every step and column read. Safe because each
    // connection serves one thread and sqlite-jdbc serializes calls on a connection in Java.
    config.setOpenMode(SQLiteOpenMode.NOMUTEX);
    // Sorts (NVTX ranges, the rare sorted rescan) stay in memory: temp files make the import
    // I/O-bound. The page cache stays at sqlite's default 2 MiB: the scans read each page once, so
    // a
    // larger cache only costs fresh memory (page faults) on every import.
    config.setTempStore(SQLiteConfig.TempStore.MEMORY);
    return config;
  }
}
