package dev.llmlat.analyze;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.analyze.zipkin.ZipkinV2Reader;
import dev.llmlat.attribution.ClockCorrection;
import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.attribution.TraceAttribution;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Zipkin's published traces: the skewed one corrected as Zipkin's own adjuster does, the others
 * left alone.
 */
class ZipkinTracesTest {
  static Path publicTrace(String name) {
    return dev.llmlat.sharedtraces.SharedTraces.resolve("public").resolve(name);
  }

  @Test
  void correctsZipkinsSkewedTraceTheWayZipkinDoes() throws IOException {
    List<SpanRecord> spans = ZipkinV2Reader.read(publicTrace("zipkin__skew.json"));
    TraceAttribution.Aligned aligned = TraceAttribution.alignClocks(spans);
    ClockCorrection serviceB = aligned.corrections().get("192.0.0.0");
    // Zipkin: server start := client start + (client duration - server duration) / 2
    long clientStart = 1470150004074202L * 1000;
    long expectedServerStart = clientStart + (94539L - 93577L) * 1000 / 2;
    long serverStart = 1470150004008761L * 1000;
    assertThat(serviceB.applied()).isTrue();
    assertThat(serviceB.offsetAt(serverStart))
        .isEqualTo(expectedServerStart - serverStart); // +65.922 ms
    Map<String, SpanRecord> byName = new HashMap<>();
    aligned.spans().forEach(s -> byName.put(s.name() + "/" + s.kind(), s));
    SpanRecord client = byName.get("post/Client");
    SpanRecord server = byName.get("post/Server");
    SpanRecord async = byName.get("async/Internal");
    assertThat(server.startNs()).isEqualTo(expectedServerStart);
    assertThat(server.startNs()).isGreaterThanOrEqualTo(client.startNs());
    assertThat(server.endNs()).isLessThanOrEqualTo(client.endNs());
    assertThat(async.startNs())
        .isEqualTo(
            1470150004008762L * 1000 + serviceB.offsetAt(serverStart)); // moved with its host
    assertThat(aligned.corrections().get("127.0.0.0").applied()).isFalse(); // the reference
  }

  @ParameterizedTest
  @ValueSource(strings = {"zipkin__smartthings-oauth.json", "zipkin__yelp.json"})
  void leavesTracesWithoutSkewUnchanged(String name) throws IOException {
    List<SpanRecord> spans = ZipkinV2Reader.read(publicTrace(name));
    TraceAttribution.Aligned aligned = TraceAttribution.alignClocks(spans);
    assertThat(aligned.spans())
        .extracting(SpanRecord::startNs)
        .containsExactlyElementsOf(spans.stream().map(SpanRecord::startNs).toList());
    assertThat(aligned.corrections().values()).allMatch(c -> !c.applied());
    assertThat(aligned.corrections().values().stream().mapToInt(ClockCorrection::pairs).sum())
        .isPositive();
  }
}
