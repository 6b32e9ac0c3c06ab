package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class UpstreamConnectionTest {
  private final List<SpanData> exported = new ArrayList<>();
  private final SdkTracerProvider provider =
      SdkTracerProvider.builder()
          .addSpanProcessor(
              SimpleSpanProcessor.create(
                  new SpanExporter() {
                    @Override
                    public CompletableResultCode export(Collection<SpanData> spans) {
                      exported.addAll(spans);
                      return CompletableResultCode.ofSuccess();
                    }

                    @Override
                    public CompletableResultCode flush() {
                      return CompletableResultCode.ofSuccess();
                    }

                    @Override
                    public CompletableResultCode shutdown() {
                      return CompletableResultCode.ofSuccess();
                    }
                  }))
          .build();
  private final Tracer tracer = provider.get("test");

  @AfterEach
  void close() {
    provider.close();
  }

  @Test
  void eventsGoOnTheClientSpanOnceEachWithThePoolFigures() {
    Span client = tracer.spanBuilder("POST").startSpan();
    UpstreamConnection connection =
        UpstreamConnection.on(client, null, UpstreamConnection.APACHE_HTTPCLIENT_5);
    connection.acquireStart(1_000, "http://127.0.0.1:8000", 1, 2, 1);
    connection.acquired(true);
    connection.acquired(false); // a second hook seeing the same moment: the first one counts
    connection.headersWritten();
    client.end();

    SpanData span = exported.get(0);
    assertThat(span.getAttributes().get(AttributeKey.stringKey(LlmlatAttributes.UPSTREAM_CLIENT)))
        .isEqualTo("apache-httpclient-5");
    assertThat(span.getEvents())
        .extracting(EventData::getName)
        .containsExactly(
            LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START,
            LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED,
            LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN);
    EventData start = span.getEvents().get(0);
    assertThat(start.getEpochNanos()).isEqualTo(1_000);
    assertThat(start.getAttributes().get(AttributeKey.stringKey(LlmlatAttributes.UPSTREAM_POOL)))
        .isEqualTo("http://127.0.0.1:8000");
    assertThat(start.getAttributes().get(AttributeKey.longKey(LlmlatAttributes.UPSTREAM_POOL_MAX)))
        .isEqualTo(1);
    assertThat(
            start.getAttributes().get(AttributeKey.longKey(LlmlatAttributes.UPSTREAM_POOL_PENDING)))
        .isEqualTo(2);
    assertThat(
            start.getAttributes().get(AttributeKey.longKey(LlmlatAttributes.UPSTREAM_POOL_LEASED)))
        .isEqualTo(1);
    assertThat(start.getAttributes().get(AttributeKey.stringKey(LlmlatAttributes.UPSTREAM_SPAN_ID)))
        .isNull();
    assertThat(
            span.getEvents()
                .get(1)
                .getAttributes()
                .get(AttributeKey.booleanKey(LlmlatAttributes.UPSTREAM_CONNECTION_REUSED)))
        .isTrue();
  }

  @Test
  void unknownFiguresAreLeftOut() {
    Span client = tracer.spanBuilder("POST").startSpan();
    UpstreamConnection.on(client, null, UpstreamConnection.JETTY_CLIENT_12)
        .acquireStart(null, -1, -1, -1);
    client.end();

    assertThat(exported.get(0).getEvents().get(0).getAttributes().isEmpty()).isTrue();
  }

  @Test
  void pendingEventsKeepTheirTimesAndNameTheClientSpanOnceAttachedToTheRoot() {
    UpstreamConnection connection = UpstreamConnection.pending(UpstreamConnection.REACTOR_NETTY);
    connection.acquireStart(100, "http://127.0.0.1:8000", 1, 0, 0);
    connection.connectStart(200);
    connection.connected(300);
    connection.acquired(false);
    Span root = tracer.spanBuilder("POST /v1/chat/completions").startSpan();
    connection.attach(root, "00f067aa0ba902b7");
    connection.bodyWritten(); // after the attach: straight onto the root
    root.end();

    SpanData span = exported.get(0);
    assertThat(span.getAttributes().get(AttributeKey.stringKey(LlmlatAttributes.UPSTREAM_CLIENT)))
        .isEqualTo("reactor-netty");
    assertThat(span.getEvents())
        .extracting(EventData::getName)
        .containsExactly(
            LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START,
            LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START,
            LlmlatAttributes.EVENT_UPSTREAM_CONNECTED,
            LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED,
            LlmlatAttributes.EVENT_UPSTREAM_BODY_WRITTEN);
    assertThat(span.getEvents().subList(0, 3))
        .extracting(EventData::getEpochNanos)
        .containsExactly(100L, 200L, 300L);
    assertThat(span.getEvents())
        .allSatisfy(
            e ->
                assertThat(
                        e.getAttributes()
                            .get(AttributeKey.stringKey(LlmlatAttributes.UPSTREAM_SPAN_ID)))
                    .isEqualTo("00f067aa0ba902b7"));
  }

  @Test
  void noRecordWithoutARecordingSpan() {
    assertThat(UpstreamConnection.on(null, null, UpstreamConnection.APACHE_HTTPCLIENT_5)).isNull();
    assertThat(
            UpstreamConnection.on(Span.getInvalid(), null, UpstreamConnection.APACHE_HTTPCLIENT_5))
        .isNull();
  }
}
