package dev.llmlat.testing;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** GPU exports made for tests. */
public final class ExportFixtures {
  private ExportFixtures() {}

  /**
   * An Nsight export with one scheduler-SDK decode range over {@code requests} traces (ids from
   * {@code firstTrace} on) launching {@code kernels} kernels.
   */
  public static Path nsysDecodeStep(Path file, int requests, int kernels, int firstTrace)
      throws Exception {
    long pid = 42L << 24;
    long tid = pid + 1;
    List<String> traces = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      traces.add(String.format(Locale.ROOT, "%032x", firstTrace + i));
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
        Statement st = c.createStatement()) {
      st.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)");
      st.execute(
          "INSERT INTO StringIds VALUES (1, 'flash_attn_decode'), (2, 'cudaLaunchKernel_v7000')");
      st.execute(
          "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
              + " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, shortName INTEGER)");
      st.execute(
          "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,"
              + " correlationId INTEGER, nameId INTEGER)");
      st.execute(
          "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, globalTid INTEGER)");
      c.setAutoCommit(false);
      try (PreparedStatement kernel =
              c.prepareStatement(
                  "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, ?, ?, 1)");
          PreparedStatement call =
              c.prepareStatement(
                  "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, 2)")) {
        for (int i = 0; i < kernels; i++) {
          call.setLong(1, 1_000 + 10L * i);
          call.setLong(2, 1_005 + 10L * i);
          call.setLong(3, tid);
          call.setLong(4, 100 + i);
          call.addBatch();
          kernel.setLong(1, 100_000 + 20L * i);
          kernel.setLong(2, 100_015 + 20L * i);
          kernel.setLong(3, 100 + i);
          kernel.setLong(4, pid);
          kernel.addBatch();
        }
        call.executeBatch();
        kernel.executeBatch();
      }
      st.execute(
          "INSERT INTO NVTX_EVENTS VALUES (500, "
              + (2_000 + 10L * kernels)
              + ", 59, 'llmlat step=00000000000000ab"
              + " kind=decode traces="
              + String.join(",", traces)
              + "', "
              + tid
              + ")");
      c.commit();
    }
    return file;
  }
}
