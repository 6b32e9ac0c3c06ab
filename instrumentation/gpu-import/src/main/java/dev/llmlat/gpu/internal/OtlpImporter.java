package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.otlpjson.InvalidOtlpJsonException;
import dev.llmlat.otlpjson.OtlpJsonReader;
import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.otlpkafka.SpanSink;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Map;

/**
 * OTLP/JSON passes through as it is, streamed in two passes of one {@link OtlpJsonReader}: the
 * first checks every span (and finds repeated span ids) before anything is emitted, the second
 * regroups the spans into batches of at most {@link ImportOptions#batchSize()} spans (a request of
 * the file ends a batch). Memory is a batch plus 16 bytes a span for the repeat check, however
 * large a single request is.
 *
 * <p>A span id that repeats within its trace is counted, not refused: exporters that deliver at
 * least once (an OTLP retry after a lost response, the Collector's file exporter behind a retrying
 * queue, overlapping captures concatenated) write the same span twice, and refusing the whole file
 * would leave the user no way in but editing it; the warning names the first repeat so it can be
 * looked at. Ids that cannot be right (missing, all zeros) and impossible times are refused.
 */
public final class OtlpImporter {
  static final String REPEATED_SPAN_ID =
      "spans whose span id repeats one of an earlier span of the same trace "
          + "(an exporter's retry writes a span twice): kept as they are";
  static final String UNCHECKED =
      "spans not checked for repeated span ids (more spans than an eighth of the "
          + "heap holds fingerprints of)";

  private OtlpImporter() {}

  public static ImportReport run(Path file, ImportOptions options, SpanSink sink)
      throws IOException {
    long size = Files.size(file);
    OtlpJsonReader reader = new OtlpJsonReader(file);
    Warnings warnings = new Warnings();
    SpanIdSet ids = new SpanIdSet(Runtime.getRuntime().maxMemory() / 8);
    long[] spans = new long[1];
    long[] batches = new long[1];
    try {
      reader.read(
          options.progress()::update,
          0,
          2 * size,
          (group, span, where) -> {
            spans[0]++;
            if (!ids.add(span.getTraceId(), span.getSpanId()) && warnings.count(REPEATED_SPAN_ID)) {
              warnings.first(
                  REPEATED_SPAN_ID,
                  where.describe()
                      + ", trace "
                      + HexFormat.of().formatHex(span.getTraceId().toByteArray())
                      + " span "
                      + HexFormat.of().formatHex(span.getSpanId().toByteArray()));
            }
          });
      warnings.add(
          UNCHECKED,
          ids.unchecked(),
          "span " + (spans[0] - ids.unchecked() + 1) + " of " + spans[0]);
      spans[0] = 0;
      reader.readBatches(
          options.batchSize(),
          options.progress()::update,
          size,
          2 * size,
          request -> {
            SpanBatch batch = SpanBatch.of(request);
            sink.accept(batch);
            spans[0] += batch.spanCount();
            batches[0]++;
          });
    } catch (InvalidOtlpJsonException e) {
      throw Inputs.invalid(e);
    }
    options.progress().update(2 * size, 2 * size);
    return new ImportReport(
        file,
        ExportFormat.OTLP_JSON,
        0,
        0,
        0,
        0,
        0,
        0,
        Map.of(),
        "otlp:as recorded",
        spans[0],
        batches[0],
        warnings.list());
  }
}
