package dev.llmlat.runtime.process;

import java.io.PrintStream;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import sun.misc.Signal;

/**
 * How a command ends on Ctrl-C or SIGTERM: one line saying so, the JVM's shutdown hooks (which stop
 * consumers, servers and close the embedded engine), then exit 130 or 143. The embedded engine's
 * native threads must be stopped before the C runtime runs its exit handlers, or its static
 * destructors race them (SIGSEGV and a crash file); {@link #haltNow} leaves without those handlers
 * when the engine cannot be closed in time.
 */
public final class Interrupts {
  private static volatile int exitStatus = 1;
  private static volatile String signal = "";

  private Interrupts() {}

  /**
   * Installs the handlers for SIGINT and SIGTERM; {@code command} names the command in the line
   * printed.
   */
  public static void install(String command, PrintStream err) {
    handle("INT", 130, command, err);
    handle("TERM", 143, command, err);
  }

  private static void handle(String name, int status, String command, PrintStream err) {
    try {
      Signal.handle(
          new Signal(name),
          s -> {
            if (!signal.isEmpty()) {
              return; // already stopping
            }
            signal = "SIG" + name;
            exitStatus = status;
            err.println(
                "llmlat"
                    + (command.isEmpty() ? "" : " " + command)
                    + ": interrupted by SIG"
                    + name
                    + "; stopping");
            err.flush();
            // System.exit runs the shutdown hooks; it must not run on the signal dispatcher's own
            // stack
            Thread exit = new Thread(() -> ExitSequence.exit(status), "llmlat-exit");
            exit.start();
          });
    } catch (IllegalArgumentException e) {
      // the signal is not available here (e.g. already taken by the JVM with -Xrs): keep the
      // default
    }
  }

  /** The signal that is stopping the process ("" when none). */
  public static String signal() {
    return signal;
  }

  /** The status the process exits with when a signal stops it (1 otherwise). */
  public static int exitStatus() {
    return exitStatus;
  }

  /** Ends the process at once with {@code status}, without the C runtime's exit handlers. */
  public static void haltNow(int status) {
    System.out.flush();
    System.err.flush();
    try {
      MethodHandle exit =
          Linker.nativeLinker()
              .downcallHandle(
                  Linker.nativeLinker().defaultLookup().find("_exit").orElseThrow(),
                  FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT));
      exit.invokeExact(status);
    } catch (Throwable t) {
      Runtime.getRuntime().halt(status);
    }
  }
}
