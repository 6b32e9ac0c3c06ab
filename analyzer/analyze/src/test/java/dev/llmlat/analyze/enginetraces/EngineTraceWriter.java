package dev.llmlat.analyze.enginetraces;

import java.util.List;

/**
 * Writes requests the way one engine's own tracing code does: the OTLP/JSON an OpenTelemetry SDK
 * inside that engine would export for them (span names, kinds, attributes and their units,
 * resource, ids, timestamps as that engine stamps them), with no llmlat SDK and no llmlat
 * attributes. Each implementation names the engine's repository, source paths and version it
 * follows in its class comment.
 */
public interface EngineTraceWriter {

  /** The engine, as in the fixture's name ("vllm", "tensorrt-llm", "sglang", "tgi"). */
  String engine();

  /**
   * OTLP/JSON {@code ExportTraceServiceRequest} documents, one per line, as the engine's exporter
   * would send them for {@code requests}, served by one engine process named {@code instance}
   * (distinct values stand for replicas; the writer uses it only where the engine itself would put
   * something that differs per process, else ignores it).
   */
  List<String> write(List<RequestTruth> requests, String instance);
}
