package dev.llmlat.ingest.spans;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.SpanFixtures;
import io.opentelemetry.proto.common.v1.AnyValue;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OtelTracesRowEncoderTest {
  @TempDir Path dir;

  @Test
  void storesEveryFieldOfASpanAsTheCollectorExporterDoes() {
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(dir, EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      OtelTracesRowEncoder encoder = new OtelTracesRowEncoder().add(SpanFixtures.everyField());
      assertThat(encoder.rows()).isEqualTo(1);
      encoder.insertInto(store, null);
      assertThat(encoder.rows()).isZero();
      SpanFixtures.assertEveryFieldStored(store);
      // the exporter's lookup view saw the trace
      assertThat(
              store
                  .query(
                      "SELECT count() FROM otel_traces_trace_id_ts WHERE TraceId = '"
                          + SpanFixtures.TRACE
                          + "'")
                  .single())
          .isEqualTo("1");
    }
  }

  @Test
  void rendersAttributeValuesLikePdata() {
    assertThat(AttributeValues.formatDouble(1e21)).isEqualTo("1000000000000000000000");
    assertThat(AttributeValues.formatDouble(-0.000001)).isEqualTo("-0.000001");
    assertThat(AttributeValues.formatDouble(Double.NaN)).isEqualTo("NaN");
    assertThat(AttributeValues.formatDouble(Double.NEGATIVE_INFINITY)).isEqualTo("-Inf");
    assertThat(AttributeValues.asString(AnyValue.getDefaultInstance())).isEmpty();
  }
}
