package dev.llmlat.imports;

import dev.llmlat.gpu.SpanBatch;
import dev.llmlat.spans.GpuKernelRowEncoder;
import dev.llmlat.spans.OtelTracesRowEncoder;
import dev.llmlat.spans.SpanRouter;
import dev.llmlat.store.ClickHouseStore;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

/**
 * Writes an import straight into the store: rows go to staging tables of the same structure
 * first, and move into {@code otel_traces} / {@code gpu_kernels} with one INSERT ... SELECT each
 * on {@link #commit()}, so a failed import leaves the real tables untouched.
 */
public final class StoreImportTarget implements ImportTarget {
  private static final int FLUSH_ROWS = 50_000;

  private final ClickHouseStore store;
  private final String tracesStaging;
  private final String kernelsStaging;
  private SpanRouter rows = new SpanRouter();
  private boolean open = true;

  public StoreImportTarget(ClickHouseStore store) {
    this.store = store;
    String suffix = "_import_" + ProcessHandle.current().pid() + "_" + System.nanoTime();
    tracesStaging = OtelTracesRowEncoder.TABLE + suffix;
    kernelsStaging = GpuKernelRowEncoder.TABLE + suffix;
    store.execute("CREATE TABLE " + tracesStaging + " AS " + OtelTracesRowEncoder.TABLE);
    store.execute("CREATE TABLE " + kernelsStaging + " AS " + GpuKernelRowEncoder.TABLE);
  }

  @Override
  public void accept(SpanBatch batch) {
    for (ExportTraceServiceRequest request : batch.requests()) {
      rows.add(request);
    }
    if (rows.spans() + rows.kernels() >= FLUSH_ROWS) {
      flush();
    }
  }

  private void flush() {
    rows.insertInto(store, null, tracesStaging, kernelsStaging);
    rows = new SpanRouter();
  }

  @Override
  public void commit() {
    flush();
    store.execute("INSERT INTO " + OtelTracesRowEncoder.TABLE + " SELECT * FROM " + tracesStaging);
    store.execute("INSERT INTO " + GpuKernelRowEncoder.TABLE + " SELECT * FROM " + kernelsStaging);
    open = false;
    dropStaging();
  }

  @Override
  public void abort() {
    if (open) {
      open = false;
      dropStaging();
    }
  }

  private void dropStaging() {
    store.execute("DROP TABLE IF EXISTS " + tracesStaging);
    store.execute("DROP TABLE IF EXISTS " + kernelsStaging);
  }

  @Override
  public String description() {
    return store.description();
  }

  @Override
  public void close() {
    abort();
  }
}
