package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.UnattributedReason;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.sql.SQLException;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The reading half of an Nsight import, on a thread and sqlite connection of its own. It reads the
 * later runtime calls while the importing thread checks the activity tables' order and reads the
 * earlier calls, then streams the activities, joined to launch call and step, in
 * {@link ActivityBatch}es through a small bounded queue. Measured: reading through sqlite-jdbc (a
 * JNI call per column) costs as much as building the spans, so the two halves overlap; memory stays
 * bounded by the queue.
 */
final class NsysReader implements AutoCloseable {
  private static final int QUEUED = 4;

  private final NsysExport export;
  private final RangeIndex index;
  private final UnattributedReason noStep;
  private final UnattributedReason noLaunch;
  private final long fromRowid;
  private final long toRowid;
  private final CompletableFuture<LaunchCalls> earlier = new CompletableFuture<>();
  private final CompletableFuture<Set<String>> unordered = new CompletableFuture<>();
  private final BlockingQueue<ActivityBatch> full = new ArrayBlockingQueue<>(QUEUED);
  private final BlockingQueue<ActivityBatch> free = new ArrayBlockingQueue<>(QUEUED + 2);
  private final Thread thread;

  private NsysReader(NsysExport export, RangeIndex index, UnattributedReason noStep, UnattributedReason noLaunch,
      long fromRowid, long toRowid) {
    this.export = export;
    this.index = index;
    this.noStep = noStep;
    this.noLaunch = noLaunch;
    this.fromRowid = fromRowid;
    this.toRowid = toRowid;
    for (int i = 0; i < QUEUED + 2; i++) {
      free.add(new ActivityBatch());
    }
    this.thread = new Thread(this::run, "llmlat-nsys-reader");
    thread.setDaemon(true);
  }

  /**
   * Starts reading on {@code export} (which this reader closes): runtime calls with rowids in
   * {@code [fromRowid, toRowid)}, then the activities, once {@link #earlierCalls} hands over the rest.
   * {@code index} belongs to the reader from here on.
   */
  static NsysReader start(NsysExport export, RangeIndex index, UnattributedReason noStep, UnattributedReason noLaunch,
      long fromRowid, long toRowid) {
    NsysReader reader = new NsysReader(export, index, noStep, noLaunch, fromRowid, toRowid);
    reader.thread.start();
    return reader;
  }

  /** The runtime calls of rowids below the reader's own, read by the importing thread. */
  void earlierCalls(LaunchCalls calls) {
    earlier.complete(calls);
  }

  /** The activity tables to read sorted ({@link NsysExport#unorderedActivityTables()}), checked by the importing thread. */
  void unorderedTables(Set<String> tables) {
    unordered.complete(tables);
  }

  /**
   * The next batch of activities in start order, or null after the last; give it back with
   * {@link #release}. Rethrows what failed on the reader's thread.
   */
  ActivityBatch take() throws IOException, SQLException {
    ActivityBatch b;
    try {
      b = full.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while importing " + export.file());
    }
    Exception f = b.failure;
    if (f instanceof SQLException) {
      throw (SQLException) f;
    } else if (f instanceof IOException) {
      throw (IOException) f;
    } else if (f instanceof RuntimeException) {
      throw (RuntimeException) f;
    } else if (f != null) {
      throw new IllegalStateException(f);
    }
    return b.last ? null : b;
  }

  void release(ActivityBatch b) {
    b.size = 0;
    free.add(b);
  }

  private void run() {
    try {
      LaunchCalls later = LaunchCalls.read(export, fromRowid, toRowid);
      try (ActivityStream activities = ActivityStream.open(export, unordered.get())) {
        LaunchCalls first = earlier.get();
        ActivityBatch b = free.take();
        while (activities.next()) {
          add(b, activities.current(), first, later);
          if (b.isFull()) {
            full.put(b);
            b = free.take();
          }
        }
        if (b.size > 0) {
          full.put(b);
          b = free.take();
        }
        b.last = true;
        full.put(b);
      }
    } catch (InterruptedException e) {
      // The importing thread gave up (see close); nobody is waiting for batches.
    } catch (Exception e) {
      ActivityBatch failed = new ActivityBatch();
      failed.failure = e instanceof ExecutionException && e.getCause() instanceof Exception
          ? (Exception) e.getCause() : e;
      full.clear(); // the importing thread stops at the failure, not after batches past it
      full.offer(failed);
    } finally {
      export.close();
    }
  }

  private void add(ActivityBatch b, ActivityCursor a, LaunchCalls first, LaunchCalls later) throws SQLException {
    int i = b.size++;
    int kind = a.kind;
    b.kind[i] = kind;
    b.start[i] = a.start;
    b.end[i] = a.end;
    b.name[i] = kind == GpuSpanWriter.KERNEL ? (a.nameId == ActivityCursor.NONE ? null : export.string(a.nameId))
        : kind == GpuSpanWriter.MEMCPY ? NsysExport.memcpyName(a.copyKind) : "Memset";
    b.device[i] = a.device;
    b.stream[i] = a.stream;
    b.correlation[i] = a.correlation == ActivityCursor.NONE ? 0 : a.correlation;
    b.bytes[i] = a.bytes;
    boolean hasPid = a.globalPid != ActivityCursor.NONE;
    long call = hasPid && a.correlation != ActivityCursor.NONE
        ? LaunchCalls.find(first, later, a.correlation, a.globalPid >> 24) : -1;
    if (call >= 0) {
      long thread = LaunchCalls.thread(first, later, call);
      b.step[i] = index.find(thread, LaunchCalls.start(first, later, call));
      b.reason[i] = noStep;
      b.pid[i] = NsysExport.pidOf(thread);
      b.tid[i] = NsysExport.tidOf(thread);
    } else {
      b.step[i] = -1;
      b.reason[i] = noLaunch;
      b.pid[i] = hasPid ? NsysExport.pidOf(a.globalPid) : -1;
      b.tid[i] = -1;
    }
  }

  /** Stops the reader if it is still running (the import failed or was abandoned) and waits for it. */
  @Override
  public void close() {
    earlier.cancel(false);
    unordered.cancel(false);
    thread.interrupt();
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
