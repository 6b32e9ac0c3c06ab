package dev.llmlat.agent.gateway.internal;

import java.nio.ByteBuffer;

/**
 * Counts the content events of a {@code text/event-stream} body as it is written: events with a
 * {@code data:} line other than OpenAI's closing {@code data: [DONE]}. Comments ({@code : ping}),
 * {@code event:}/{@code id:} lines and keep-alives are not content. Keeps no payload, only a few
 * bytes of state; events may be split across writes at any byte. Not thread-safe.
 */
public final class SseEventCounter {
  private static final byte[] DATA = {'d', 'a', 't', 'a', ':'};
  private static final byte[] DONE = {'[', 'D', 'O', 'N', 'E', ']'};

  /** Bytes seen in the current line (CR excluded). */
  private int linePos;

  /** The line so far starts with "data:". */
  private boolean dataLine;

  /** Matched bytes of "[DONE]" after "data:" and optional spaces; -1 once it cannot match. */
  private int donePos;

  private boolean leadingSpace;

  /** The current event already counted (one event may carry several data lines). */
  private boolean eventCounted;

  /** Feeds written bytes; returns how many content events they completed a data line of. */
  public int accept(byte[] bytes, int offset, int length) {
    int events = 0;
    int end = offset + length;
    for (int i = offset; i < end; i++) {
      if (restOfLineIgnored()) {
        while (i < end && bytes[i] != '\n') {
          i++;
        }
        if (i == end) {
          break;
        }
      }
      events += step(bytes[i]);
    }
    return events;
  }

  public int accept(ByteBuffer buffer) {
    int events = 0;
    int end = buffer.limit();
    for (int i = buffer.position(); i < end; i++) {
      if (restOfLineIgnored()) {
        while (i < end && buffer.get(i) != '\n') {
          i++;
        }
        if (i == end) {
          break;
        }
      }
      events += step(buffer.get(i));
    }
    return events;
  }

  /**
   * The line can no longer be a content line (not "data:", or its payload is not "[DONE]"): its
   * bytes up to the newline change nothing, and a JSON chunk is skipped in a tight loop instead of
   * byte by byte through {@link #step}.
   */
  private boolean restOfLineIgnored() {
    return linePos >= DATA.length && (!dataLine || donePos < 0);
  }

  private int step(byte b) {
    if (b == '\r') {
      return 0;
    }
    if (b == '\n') {
      int counted = 0;
      if (linePos == 0) {
        eventCounted = false; // blank line: the event ends
      } else if (dataLine && donePos != DONE.length && !eventCounted) {
        eventCounted = true;
        counted = 1;
      }
      linePos = 0;
      dataLine = false;
      donePos = 0;
      leadingSpace = true;
      return counted;
    }
    if (linePos < DATA.length) {
      dataLine = (linePos == 0 || dataLine) && b == DATA[linePos];
      linePos++;
      leadingSpace = true;
      return 0;
    }
    linePos++;
    if (!dataLine || donePos < 0) {
      return 0;
    }
    if (b == ' ' && leadingSpace && donePos == 0) {
      return 0;
    }
    leadingSpace = false;
    if (donePos < DONE.length && b == DONE[donePos]) {
      donePos++;
    } else if (!(donePos == DONE.length && b == ' ')) {
      donePos = -1;
    }
    return 0;
  }
}
