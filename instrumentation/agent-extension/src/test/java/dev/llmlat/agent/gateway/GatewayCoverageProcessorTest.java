package dev.llmlat.agent.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link GatewayCoverageProcessor} in a plain SDK: which spans it marks, and its one warning per
 * stack.
 */
class GatewayCoverageProcessorTest {
  private static final AttributeKey<String> FIRST_CHUNK =
      AttributeKey.stringKey("llmlat.gateway.first_chunk");
  private static final AttributeKey<String> SERVER =
      AttributeKey.stringKey("llmlat.gateway.server");

  private final SdkTracerProvider tracing =
      SdkTracerProvider.builder().addSpanProcessor(new GatewayCoverageProcessor()).build();
  private final List<String> warnings = new ArrayList<>();
  private final Logger logger = Logger.getLogger(GatewayCoverageProcessor.class.getName());
  private final Handler capture =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          warnings.add(record.getMessage());
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  GatewayCoverageProcessorTest() {
    logger.addHandler(capture);
  }

  @AfterEach
  void close() {
    logger.removeHandler(capture);
    tracing.close();
  }

  @Test
  void openAiRequestsOfAnUnobservedStackAreMarkedAndTheStackNamedOnce() {
    for (int i = 0; i < 3; i++) {
      Attributes marked =
          end(
              "io.opentelemetry.undertow-1.4",
              SpanKind.SERVER,
              "POST",
              "/v1/chat/completions",
              false);
      assertThat(marked.get(FIRST_CHUNK)).isEqualTo("unsupported");
      assertThat(marked.get(SERVER)).isEqualTo("io.opentelemetry.undertow-1.4");
    }
    assertThat(
            end(
                    "io.opentelemetry.akka-http-10.0",
                    SpanKind.SERVER,
                    "POST",
                    "/x/v1/completions/",
                    false)
                .get(SERVER))
        .isEqualTo("io.opentelemetry.akka-http-10.0");
    assertThat(warnings).hasSize(2);
    assertThat(warnings.get(0))
        .contains("io.opentelemetry.undertow-1.4")
        .contains("llmlat.gateway.first_chunk=unsupported");
  }

  @Test
  void observedOtherAndNonServerSpansAreLeftAlone() {
    assertThat(end("s", SpanKind.SERVER, "POST", "/v1/chat/completions", true).get(FIRST_CHUNK))
        .isNull();
    assertThat(end("s", SpanKind.SERVER, "GET", "/v1/chat/completions", false).get(FIRST_CHUNK))
        .isNull();
    assertThat(end("s", SpanKind.SERVER, "POST", "/v1/embeddings", false).get(FIRST_CHUNK))
        .isNull();
    assertThat(end("s", SpanKind.CLIENT, "POST", "/v1/chat/completions", false).get(FIRST_CHUNK))
        .isNull();
    assertThat(end("s", SpanKind.SERVER, "POST", null, false).get(FIRST_CHUNK)).isNull();
    assertThat(warnings).isEmpty();
  }

  private Attributes end(
      String scope, SpanKind kind, String method, String path, boolean observed) {
    Span span =
        tracing
            .get(scope)
            .spanBuilder("span")
            .setSpanKind(kind)
            .setAttribute("http.request.method", method)
            .startSpan();
    if (path != null) {
      span.setAttribute("url.path", path);
    }
    if (observed) {
      span.setAttribute("gen_ai.operation.name", "chat");
    }
    span.end();
    return ((ReadableSpan) span).toSpanData().getAttributes();
  }
}
