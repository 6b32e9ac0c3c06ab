package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.otlpkafka.SpanSink;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Map;

/**
 * OTLP/JSON passes through as it is, streamed in two passes: the first checks every span (and finds
 * repeated span ids) before anything is emitted, the second regroups the spans into batches of at
 * most {@link ImportOptions#batchSize()} spans (a request of the file ends a batch). Memory is a
 * batch plus 16 bytes a span for the repeat check, however large a single request is.
 *
 * <p>A span id that repeats within its trace is counted, not refused: exporters that deliver at
 * least once (an OTLP retry after a lost response, the Collector's file exporter behind a retrying
 * queue, overlapping captures concatenated) write the same span twice, and refusing the whole file
 * would leave the user no way in but editing it; the warning names the first repeat so it can be
 * looked at. Ids that cannot be right (missing, all zeros) and impossible times are refused.
 */
public final class OtlpImporter {
  static final String REPEATED_SPAN_ID = "spans whose span id repeats one of an earlier span of the same trace "
      + "(an exporter's retry writes a span twice): kept as they are";
  static final String UNCHECKED = "spans not checked for repeated span ids (more spans than an eighth of the "
      + "heap holds fingerprints of)";

  private OtlpImporter() {}

  public static ImportReport run(Path file, ImportOptions options, SpanSink sink) throws IOException {
    long size = Files.size(file);
    OtlpJson reader = new OtlpJson(file);
    Warnings warnings = new Warnings();
    SpanIdSet ids = new SpanIdSet(Runtime.getRuntime().maxMemory() / 8);
    long[] spans = new long[1];
    reader.scan(options.progress(), 0, 2 * size, (group, span, where) -> {
      spans[0]++;
      if (!ids.add(span.getTraceId(), span.getSpanId()) && warnings.count(REPEATED_SPAN_ID)) {
        warnings.first(REPEATED_SPAN_ID, where.describe() + ", trace " + HexFormat.of().formatHex(
            span.getTraceId().toByteArray()) + " span " + HexFormat.of().formatHex(span.getSpanId().toByteArray()));
      }
    });
    warnings.add(UNCHECKED, ids.unchecked(), "span " + (spans[0] - ids.unchecked() + 1) + " of " + spans[0]);
    OtlpBatcher batcher = new OtlpBatcher(options.batchSize(), sink);
    reader.scan(options.progress(), size, 2 * size, new OtlpJson.SpanVisitor() {
      @Override
      public void span(OtlpJson.ScopeGroup group, io.opentelemetry.proto.trace.v1.Span span, OtlpJson.Where where) {
        batcher.add(group, span);
      }

      @Override
      public void endRequest() {
        batcher.flush();
      }
    });
    options.progress().update(2 * size, 2 * size);
    return new ImportReport(file, ExportFormat.OTLP_JSON, 0, 0, 0, 0, 0, 0, Map.of(), "otlp:as recorded",
        batcher.spans(), batcher.batches(), warnings.list());
  }
}
