package dev.llmlat.stats;

import java.util.Arrays;
import java.util.TreeSet;

/**
 * One side of a two-sample bootstrap: its columns, each also sorted with the row every sorted value
 * came from, so the quantiles and mean of a resample (given as how often each row was drawn) come
 * out without building or sorting the resample: the mean is a weighted sum in row order, a quantile
 * the value at its rank, found walking the sorted values down from the largest (the ranks of p50
 * and up lie in the upper half).
 */
final class ResampledColumns {
  private final int rows;
  private final double[][] columns;
  private final double[][] sorted;
  private final int[][] rowOf;

  /** The resample ranks the quantiles need, largest first. */
  private final int[] ranks;

  /**
   * Per quantile: the positions in {@link #ranks} of its two closest ranks, and how far between
   * them it lies.
   */
  private final int[] below;

  private final int[] above;
  private final double[] fraction;

  ResampledColumns(double[][] columns, String side, double[] quantiles) {
    if (columns.length == 0) {
      throw new IllegalArgumentException("no columns to bootstrap");
    }
    rows = columns[0].length;
    if (rows == 0) {
      throw new IllegalArgumentException("no values to bootstrap on side " + side);
    }
    this.columns = columns;
    sorted = new double[columns.length][];
    rowOf = new int[columns.length][];
    for (int c = 0; c < columns.length; c++) {
      double[] column = columns[c];
      if (column.length != rows) {
        throw new IllegalArgumentException(
            "the columns of side " + side + " differ in length: " + rows + " and " + column.length);
      }
      Integer[] order = new Integer[rows];
      for (int i = 0; i < rows; i++) {
        order[i] = i;
      }
      Arrays.sort(order, (x, y) -> Double.compare(column[x], column[y]));
      sorted[c] = new double[rows];
      rowOf[c] = new int[rows];
      for (int i = 0; i < rows; i++) {
        rowOf[c][i] = order[i];
        sorted[c][i] = column[order[i]];
      }
    }
    // type 7, as Quantiles.ofSorted: h = (n - 1) q, between ranks floor(h) and floor(h) + 1
    TreeSet<Integer> needed = new TreeSet<>();
    for (double q : quantiles) {
      if (!(q >= 0 && q <= 1)) {
        throw new IllegalArgumentException("a quantile is between 0 and 1, not " + q);
      }
      int lo = (int) Math.floor((rows - 1) * q);
      needed.add(lo);
      needed.add(Math.min(rows - 1, lo + 1));
    }
    ranks = needed.descendingSet().stream().mapToInt(Integer::intValue).toArray();
    below = new int[quantiles.length];
    above = new int[quantiles.length];
    fraction = new double[quantiles.length];
    for (int i = 0; i < quantiles.length; i++) {
      double h = (rows - 1) * quantiles[i];
      int lo = (int) Math.floor(h);
      below[i] = position(lo);
      above[i] = position(Math.min(rows - 1, lo + 1));
      fraction[i] = h - lo;
    }
  }

  private int position(int rank) {
    for (int i = 0; i < ranks.length; i++) {
      if (ranks[i] == rank) {
        return i;
      }
    }
    throw new IllegalStateException("rank " + rank + " not prepared");
  }

  int rows() {
    return rows;
  }

  double[] sorted(int column) {
    return sorted[column];
  }

  /**
   * The quantiles, then the mean, of column {@code column} of the resample that drew row {@code r}
   * {@code counts[r]} times, into {@code out}.
   */
  void statistics(int column, char[] counts, double[] out) {
    double[] values = sorted[column];
    int[] from = rowOf[column];
    double[] at = new double[ranks.length];
    int next = 0;
    int larger = 0; // resampled values above the current one
    for (int i = rows - 1; i >= 0 && next < ranks.length; i--) {
      int c = counts[from[i]];
      int lowest = rows - larger - c; // the lowest rank this value takes in the resample
      while (next < ranks.length && ranks[next] >= lowest) {
        at[next++] = values[i];
      }
      larger += c;
    }
    for (int q = 0; q < below.length; q++) {
      out[q] = at[below[q]] + fraction[q] * (at[above[q]] - at[below[q]]);
    }
    // A resample's sum needs no compensation (an error of 2^-53 of it is far inside any interval);
    // four partial sums let the additions overlap instead of each waiting for the one before.
    double[] raw = columns[column];
    double s0 = 0;
    double s1 = 0;
    double s2 = 0;
    double s3 = 0;
    int r = 0;
    for (; r + 3 < rows; r += 4) {
      s0 += counts[r] * raw[r];
      s1 += counts[r + 1] * raw[r + 1];
      s2 += counts[r + 2] * raw[r + 2];
      s3 += counts[r + 3] * raw[r + 3];
    }
    for (; r < rows; r++) {
      s0 += counts[r] * raw[r];
    }
    out[below.length] = (s0 + s1 + s2 + s3) / rows;
  }
}
