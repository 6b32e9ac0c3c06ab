package dev.llmlat.bench;

import java.nio.file.Path;

/**
 * What the tensor-parallel benchmarks compare and how often: a TP-{@code ranks} export of {@code
 * capture} in {@code copies} time copies against the single-GPU path of the same size, {@code
 * warmup} rounds and then {@code rounds} measured ones.
 */
record TensorParallelRuns(Path capture, int ranks, int copies, int rounds, int warmup) {
  TensorParallelRuns {
    if (ranks < 2 || copies < 1 || rounds < 1 || warmup < 0) {
      throw new IllegalArgumentException(
          "--tp must be at least 2, --copies and --rounds at least 1, --warmup at least 0; got "
              + ranks
              + ", "
              + copies
              + ", "
              + rounds
              + ", "
              + warmup);
    }
  }
}
