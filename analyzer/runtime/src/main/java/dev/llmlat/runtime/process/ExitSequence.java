package dev.llmlat.runtime.process;

import java.util.ArrayList;
import java.util.List;

/**
 * What runs when the process exits (normally or on a signal), in one JVM shutdown hook and in
 * reverse order of registration: servers and consumers started on an open store stop before the
 * store closes. The JVM runs separate hooks concurrently, which would let the engine close under a
 * consumer's last batch. Each step is bounded; a step still running after its time is left, and
 * when the engine itself cannot close the process ends without the C runtime's exit handlers
 * ({@link Interrupts#haltNow}).
 */
public final class ExitSequence {
  /** Set by the launcher on a run that records AOT training data (see {@link #run}). */
  public static final String AOT_RECORD_PROPERTY = "llmlat.aot.record";

  private static final List<Step> STEPS = new ArrayList<>();
  private static boolean hooked;

  /** Set once native code with exit handlers of its own (the embedded engine) was loaded. */
  private static volatile boolean skipNativeExitHandlers;

  private static volatile int status = -1;

  /** One registered step; closing it removes it (its work was done another way). */
  public static final class Step implements AutoCloseable {
    private final String name;
    private final Runnable action;
    private final long timeoutMs;
    private final boolean haltIfStuck;

    private Step(String name, Runnable action, long timeoutMs, boolean haltIfStuck) {
      this.name = name;
      this.action = action;
      this.timeoutMs = timeoutMs;
      this.haltIfStuck = haltIfStuck;
    }

    @Override
    public void close() {
      synchronized (STEPS) {
        STEPS.remove(this);
      }
    }
  }

  private ExitSequence() {}

  /** Runs {@code action} at exit, given {@code timeoutMs}; later registrations run first. */
  public static Step register(String name, Runnable action, long timeoutMs) {
    return add(new Step(name, action, timeoutMs, false));
  }

  /**
   * Like {@link #register}, for closing native resources whose threads must stop before the C
   * runtime's exit handlers: stuck past {@code timeoutMs}, the process ends at once.
   */
  public static Step registerNative(String name, Runnable action, long timeoutMs) {
    return add(new Step(name, action, timeoutMs, true));
  }

  /**
   * Exits with {@code exitStatus} through the sequence. Once the embedded engine was loaded, the
   * process then ends without the C runtime's exit handlers: the engine's static destructors race
   * its remaining threads (a SIGSEGV and a crash file at random exits), and everything of ours was
   * closed by the steps.
   */
  public static void exit(int exitStatus) {
    status = exitStatus;
    System.exit(exitStatus);
  }

  private static Step add(Step step) {
    synchronized (STEPS) {
      if (!hooked) {
        Runtime.getRuntime().addShutdownHook(new Thread(ExitSequence::run, "llmlat-exit-sequence"));
        hooked = true;
      }
      STEPS.add(step);
      skipNativeExitHandlers |= step.haltIfStuck;
    }
    return step;
  }

  private static void run() {
    List<Step> steps;
    synchronized (STEPS) {
      steps = new ArrayList<>(STEPS);
      STEPS.clear();
    }
    for (int i = steps.size() - 1; i >= 0; i--) {
      Step step = steps.get(i);
      Thread t = new Thread(step.action, "llmlat-exit-" + step.name);
      t.setDaemon(true);
      t.start();
      try {
        t.join(step.timeoutMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (t.isAlive()) {
        System.err.println(
            "llmlat: "
                + step.name
                + " still ran after "
                + step.timeoutMs / 1000.0
                + " s at exit; left"
                + (step.haltIfStuck
                    ? ": ending now (the store recovers at its next start, as after a kill)"
                    : ""));
        if (step.haltIfStuck) {
          Interrupts.haltNow(exitStatus());
        }
      }
    }
    // only where the status is known (our launcher's exit or a signal); an embedding host (a test
    // runner) exits its own way. A run that records the JDK's AOT training data must exit the
    // normal way: the JVM writes that data on its way out, before the C runtime's exit handlers
    // (the launcher records only short one-shot commands, whose exits we have not seen race).
    if (skipNativeExitHandlers
        && !Boolean.getBoolean(AOT_RECORD_PROPERTY)
        && (status >= 0 || !Interrupts.signal().isEmpty())) {
      Interrupts.haltNow(exitStatus());
    }
  }

  /** The status being exited with: the signal's, else the one given to {@link #exit}. */
  private static int exitStatus() {
    return !Interrupts.signal().isEmpty() ? Interrupts.exitStatus() : status >= 0 ? status : 1;
  }
}
