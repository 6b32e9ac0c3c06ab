package dev.llmlat.store;

/** Opens the store a {@link StoreConfig} describes. */
public final class ClickHouseStores {
  private ClickHouseStores() {}

  public static ClickHouseStore open(StoreConfig config) {
    return switch (config.kind()) {
      case EMBEDDED -> EmbeddedClickHouse.open(config.dataDir(), config.engineLibrary());
      case SERVER -> JdbcClickHouse.open(config);
    };
  }
}
