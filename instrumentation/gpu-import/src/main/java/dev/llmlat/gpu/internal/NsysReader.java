package dev.llmlat.gpu.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The reading half of an Nsight import, on a thread and sqlite connection of its own. It reads the
 * later runtime calls while the importing thread reads the earlier ones, hands them over ({@link
 * #laterCalls}), then streams the activities' rows in {@link ActivityBatch}es through a bounded
 * queue; the importing thread joins them to launch call and step and builds the spans. Measured:
 * reading through sqlite-jdbc (a JNI call per column) costs about as much as joining and encoding,
 * so the two halves overlap; memory stays bounded by the queue.
 */
final class NsysReader implements AutoCloseable {
  /**
   * Batches read ahead at most: the reader starts on the activities while the importing thread
   * still reads its larger share of the runtime calls (see NsysImporter#earlierShare). A sixteenth
   * of the heap, 64 to 4096 batches (4.5 to 290 MB); more than an export needs is never made.
   */
  static final int QUEUED =
      (int)
          Math.max(64, Math.min(4096, Runtime.getRuntime().maxMemory() / 16 / ActivityBatch.BYTES));

  private static final byte[] MEMSET = "Memset".getBytes(StandardCharsets.UTF_8);

  private final NsysExport export;
  private final long fromRowid;
  private final long toRowid;
  private final CompletableFuture<LaunchCalls> later = new CompletableFuture<>();
  private final BlockingQueue<ActivityBatch> full = new ArrayBlockingQueue<>(QUEUED + 1);
  // Batches come back here; more are made, up to QUEUED + 2, while none is free.
  private final BlockingQueue<ActivityBatch> free = new ArrayBlockingQueue<>(QUEUED + 2);
  private int made;
  private Warnings warnings = new Warnings();
  private final Thread thread;

  private NsysReader(NsysExport export, long fromRowid, long toRowid) {
    this.export = export;
    this.fromRowid = fromRowid;
    this.toRowid = toRowid;
    this.thread = new Thread(this::run, "llmlat-nsys-reader");
    thread.setDaemon(true);
  }

  /**
   * Starts reading on {@code export} (which this reader closes): runtime calls with rowids in
   * {@code [fromRowid, toRowid)}, then the activities.
   */
  static NsysReader start(NsysExport export, long fromRowid, long toRowid) {
    NsysReader reader = new NsysReader(export, fromRowid, toRowid);
    reader.thread.start();
    return reader;
  }

  /**
   * The runtime calls this reader read; waits for them. Rethrows what failed on the reader's
   * thread.
   */
  LaunchCalls laterCalls() throws IOException, SQLException {
    try {
      return later.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while importing " + export.file());
    } catch (ExecutionException e) {
      throw rethrow(e.getCause());
    }
  }

  /**
   * The next batch of activities in start order, or null after the last; give it back with {@link
   * #release}. Rethrows what failed on the reader's thread.
   */
  ActivityBatch take() throws IOException, SQLException {
    ActivityBatch b;
    try {
      b = full.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while importing " + export.file());
    }
    if (b.failure != null) {
      throw rethrow(b.failure);
    }
    if (b.last) {
      warnings = b.warnings;
      return null;
    }
    return b;
  }

  /** What the activities were kept with; complete once {@link #take} returned null. */
  Warnings warnings() {
    return warnings;
  }

  private static IOException rethrow(Throwable f) throws SQLException {
    if (f instanceof SQLException) {
      throw (SQLException) f;
    } else if (f instanceof IOException) {
      return (IOException) f;
    } else if (f instanceof RuntimeException) {
      throw (RuntimeException) f;
    } else if (f instanceof Error) {
      throw (Error) f;
    }
    throw new IllegalStateException(f);
  }

  void release(ActivityBatch b) {
    b.size = 0;
    b.restart = false;
    free.add(b);
  }

  private void run() {
    try {
      try {
        later.complete(LaunchCalls.read(export, fromRowid, toRowid));
      } catch (SQLException | RuntimeException e) {
        later.completeExceptionally(e);
        return;
      }
      ActivityStream activities = ActivityStream.open(export);
      try {
        ActivityBatch b = stream(activities, nextFree());
        if (activities.outOfOrder()) {
          // Rare (Nsight writes its tables in start order): finish what was read, then all again
          // sorted.
          if (b.size > 0) {
            full.put(b);
            b = nextFree();
          }
          b.restart = true;
          full.put(b);
          activities = activities.rescanSorted(export);
          b = stream(activities, nextFree());
        }
        if (b.size > 0) {
          full.put(b);
          b = nextFree();
        }
        b.warnings = new Warnings();
        activities.addWarnings(b.warnings);
        b.last = true;
        full.put(b);
      } finally {
        activities.close();
      }
    } catch (InterruptedException e) {
      // The importing thread gave up (see close); nobody is waiting for batches.
    } catch (Exception e) {
      ActivityBatch failed = new ActivityBatch();
      failed.failure = e;
      full.clear(); // the importing thread stops at the failure, not after batches past it
      full.offer(failed);
    } finally {
      export.close();
    }
  }

  /**
   * A batch to fill: a returned one, a new one while fewer than the most were made, else the next
   * returned.
   */
  private ActivityBatch nextFree() throws InterruptedException {
    ActivityBatch b = free.poll();
    if (b == null) {
      if (made < QUEUED + 2) {
        made++;
        return new ActivityBatch();
      }
      b = free.take();
    }
    return b;
  }

  /**
   * Streams activities into batches until the stream ends or stops; returns the batch not yet
   * queued.
   */
  private ActivityBatch stream(ActivityStream activities, ActivityBatch b)
      throws SQLException, IOException, InterruptedException {
    while (activities.next()) {
      add(b, activities.current());
      if (b.isFull()) {
        full.put(b);
        b = nextFree();
      }
    }
    return b;
  }

  private void add(ActivityBatch b, ActivityCursor a) throws SQLException {
    int i = b.size++;
    b.seen[i] = a.seen;
    int kind = a.kind;
    b.kind[i] = kind;
    b.start[i] = a.start;
    b.end[i] = a.end;
    b.name[i] =
        kind == GpuSpanWriter.KERNEL
            ? (a.nameId == ActivityCursor.NONE ? null : export.stringUtf8(a.nameId))
            : kind == GpuSpanWriter.MEMCPY ? NsysExport.memcpyNameUtf8(a.copyKind) : MEMSET;
    b.device[i] = a.device;
    b.stream[i] = a.stream;
    b.correlation[i] = a.correlation;
    b.globalPid[i] = a.globalPid;
    b.bytes[i] = a.bytes;
  }

  /**
   * Stops the reader if it is still running (the import failed or was abandoned) and waits for it.
   */
  @Override
  public void close() {
    thread.interrupt();
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
