package dev.llmlat.store.http;

import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.confine.Confinement;
import java.io.IOException;
import java.nio.file.Path;

/** An embedded store in a temporary directory and the HTTP interface over it. */
final class StoreFixture implements AutoCloseable {
  final EmbeddedClickHouse store;
  final ClickHouseHttpServer server;
  final Http http;

  StoreFixture(Path dir, ServerConfig config) throws IOException {
    this(dir, config, Confinement.STRICT);
  }

  StoreFixture(Path dir, ServerConfig config, Confinement confinement) throws IOException {
    store = EmbeddedClickHouse.openConfined(dir, EngineLibrary.locate(), confinement);
    try {
      server = ClickHouseHttpServer.start(store, config);
    } catch (IOException | RuntimeException e) {
      store.close();
      throw e;
    }
    http = new Http(server.url());
  }

  StoreFixture(Path dir) throws IOException {
    this(dir, ServerConfig.loopbackWithoutPassword(0));
  }

  /** A query that keeps one engine thread busy for far longer than any test waits. */
  static final String LONG_QUERY =
      "SELECT count() FROM numbers(100000000000) WHERE sipHash64(number) % 7 = 3 SETTINGS max_threads = 1";

  @Override
  public void close() {
    try {
      server.close();
    } finally {
      store.close();
    }
  }
}
