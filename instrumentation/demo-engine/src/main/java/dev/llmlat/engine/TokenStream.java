package dev.llmlat.engine;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Hands generated tokens from the scheduler thread to the request's HTTP thread. */
final class TokenStream {
  /**
   * A token ({@code finishReason} set on the last), or the end of a failed request ({@code error}).
   */
  record Event(int index, String text, String finishReason, String error) {
    boolean last() {
      return finishReason != null || error != null;
    }
  }

  // Unbounded on purpose: it holds at most max_tokens events and the scheduler must never wait.
  private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();

  void token(int index, String text, String finishReason) {
    events.add(new Event(index, text, finishReason, null));
  }

  void fail(String error) {
    events.add(new Event(-1, null, null, error));
  }

  /** The next event, or null after {@code timeout}. */
  Event next(long timeout, TimeUnit unit) throws InterruptedException {
    return events.poll(timeout, unit);
  }
}
