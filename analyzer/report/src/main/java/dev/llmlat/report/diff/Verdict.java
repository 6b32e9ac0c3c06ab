package dev.llmlat.report.diff;

import dev.llmlat.stats.Bootstrap;

/** Whether a statistic moved from side A to side B. */
public enum Verdict {
  UP("up"),
  DOWN("down"),
  NO_CHANGE("no change");

  private final String text;

  Verdict(String text) {
    this.text = text;
  }

  /**
   * "no change" when the interval of B − A holds 0 (noise could make it) or the change is smaller
   * than {@code floor} (real perhaps, but too small to act on); else its direction.
   */
  static Verdict of(Bootstrap.Interval delta, double floor) {
    if (delta.low() <= 0 && delta.high() >= 0) {
      return NO_CHANGE;
    }
    if (Math.abs(delta.estimate()) < floor) {
      return NO_CHANGE;
    }
    return delta.low() > 0 ? UP : DOWN;
  }

  @Override
  public String toString() {
    return text;
  }
}
