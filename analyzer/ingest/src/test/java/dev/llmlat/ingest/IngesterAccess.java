package dev.llmlat.ingest;

import dev.llmlat.ingest.imports.ImportClaims;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The ingester's test hooks, for tests in other packages. Set before {@link SpanIngester#start()}.
 */
public final class IngesterAccess {
  private IngesterAccess() {}

  public static void beforeInsert(SpanIngester ingester, Consumer<Set<String>> hook) {
    ingester.beforeInsert(hook);
  }

  public static void claims(SpanIngester ingester, ImportClaims claims) {
    ingester.claims(claims);
  }
}
