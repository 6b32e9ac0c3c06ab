package dev.llmlat.otlpkafka;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Holds back the Kafka clients' repeated warnings on standard error while a command runs. The
 * clients log through slf4j (slf4j-simple looks {@code System.err} up for every line), and with the
 * broker gone each producer, consumer and admin client warns on every reconnect: hundreds of lines
 * a minute that hide the one that says what is wrong. The first line of each kind passes (with its
 * stack trace); the rest are counted and said as one line per kind every {@code interval} and at
 * {@link #close()}.
 */
public final class KafkaClientWarnings implements AutoCloseable {
  /**
   * slf4j-simple's layout of a Kafka client's warning: "... WARN NetworkClient - [Producer
   * clientId=x] message".
   */
  private static final Pattern WARNING =
      Pattern.compile(
          "\\bWARN\\s+\\S+ - \\[(?:Producer|Consumer|AdminClient|Share ?Consumer)[^\\]]*clientId=[^\\]]*\\] (.*)");

  private static final Pattern CONTINUATION =
      Pattern.compile(
          "^(\\s+at |\\s+\\.\\.\\. \\d+ more|Caused by: |\\s+Suppressed: |[\\w.$]+(?:Exception|Error)(?::|$))");

  private final PrintStream target;
  private final PrintStream previous;
  private final PrintStream filter;
  private final Lines lines;
  private final RepeatedFailures warnings = new RepeatedFailures("Kafka client warnings");
  private final long intervalNanos;
  private long nextSummaryAt;
  private boolean holdingBack; // the last line was held back: its stack trace goes too

  private KafkaClientWarnings(PrintStream target, PrintStream previous, Duration interval) {
    this.target = target;
    this.previous = previous;
    this.intervalNanos = interval.toNanos();
    this.nextSummaryAt = System.nanoTime() + intervalNanos;
    this.lines = new Lines();
    this.filter = new PrintStream(lines, true, StandardCharsets.UTF_8);
  }

  /** Filters {@code System.err} until {@link #close()}, which puts the previous stream back. */
  public static KafkaClientWarnings install(Duration interval) {
    KafkaClientWarnings w = new KafkaClientWarnings(System.err, System.err, interval);
    System.setErr(w.filter);
    return w;
  }

  /** A filter in front of {@code target} that installs nothing (tests). */
  static KafkaClientWarnings over(PrintStream target, Duration interval) {
    return new KafkaClientWarnings(target, null, interval);
  }

  /**
   * The stream to write to: lines go on to the target unless they repeat a Kafka client's warning.
   */
  public PrintStream stream() {
    return filter;
  }

  /** The message of a Kafka client's warning line, or null when {@code line} is not one. */
  static String warningMessage(String line) {
    Matcher m = WARNING.matcher(line);
    return m.find() ? m.group(1) : null;
  }

  private synchronized void line(byte[] bytes, int length) {
    String line = new String(bytes, 0, length, StandardCharsets.UTF_8);
    String message = warningMessage(line);
    if (message != null) {
      holdingBack = !warnings.record(message);
    } else if (!(holdingBack && CONTINUATION.matcher(line).find())) {
      holdingBack = false;
    }
    if (!holdingBack) {
      target.write(bytes, 0, length);
      target.flush();
    }
    if (System.nanoTime() - nextSummaryAt >= 0) {
      summarize();
    }
  }

  private synchronized void summarize() {
    nextSummaryAt = System.nanoTime() + intervalNanos;
    for (String s : warnings.drainSummary()) {
      target.println("llmlat: " + s);
    }
    target.flush();
  }

  /**
   * Says what was held back, and puts the previous {@code System.err} back if this installed
   * itself.
   */
  @Override
  public void close() {
    filter.flush();
    lines.end();
    summarize();
    if (previous != null && System.err == filter) {
      System.setErr(previous);
    }
  }

  /** Cuts the bytes into lines (a line's bytes end with its newline). */
  private final class Lines extends OutputStream {
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream(256);

    @Override
    public void write(int b) {
      synchronized (KafkaClientWarnings.this) {
        pending.write(b);
        if (b == '\n') {
          line(pending.toByteArray(), pending.size());
          pending.reset();
        }
      }
    }

    @Override
    public void write(byte[] b, int off, int len) {
      synchronized (KafkaClientWarnings.this) {
        for (int i = off; i < off + len; i++) {
          write(b[i]);
        }
      }
    }

    // PrintStream flushes between a line's text and its newline: a part of a line waits for the
    // rest
    @Override
    public void flush() {
      target.flush();
    }

    void end() {
      synchronized (KafkaClientWarnings.this) {
        if (pending.size() > 0 && !holdingBack) {
          target.write(pending.toByteArray(), 0, pending.size());
        }
        pending.reset();
      }
    }
  }
}
