package dev.llmlat.ingest;

import dev.llmlat.imports.ImportedFile;
import dev.llmlat.ingest.spans.SpanRouter;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/** One partition's batch in the making: its rows, the imports they came from, its offset range. */
final class PartitionBatch {
  final TopicPartition partition;
  SpanRouter rows = new SpanRouter();
  final Map<String, ImportedFile> imports =
      new LinkedHashMap<>(); // the imports whose rows are in it
  long first = -1;
  long last = -1;
  long firstAtNanos;
  long replayEnd = -1; // the end of a batch whose insert may have happened before a crash

  PartitionBatch(TopicPartition partition) {
    this.partition = partition;
  }

  boolean isEmpty() {
    return first < 0;
  }

  /**
   * A batch re-formed after a crash must be written with exactly its old range: written earlier
   * under the old token, a shorter one would be dropped as a repeat and its tail lost.
   */
  boolean replayIncomplete() {
    return replayEnd >= 0 && last < replayEnd;
  }

  /** Whether it is to be written now: it holds records, and a replayed batch is whole. */
  boolean ready() {
    return !isEmpty() && !replayIncomplete();
  }

  int size() {
    return rows.spans() + rows.kernels();
  }

  long end() {
    return replayEnd >= 0 ? Math.max(replayEnd, last) : last;
  }

  /** Closes the batch for the store and starts the partition's next one here. */
  SealedBatch seal() {
    SealedBatch sealed = new SealedBatch(partition, rows, first, end(), replayEnd >= 0);
    reset();
    return sealed;
  }

  void reset() {
    rows = new SpanRouter();
    imports.clear();
    first = -1;
    last = -1;
    replayEnd = -1;
  }
}
