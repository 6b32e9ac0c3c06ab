package dev.llmlat.report;

import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;

/**
 * "My benchmark says p90 is 800 ms, the server says 600 ms: where are the other 200?" For the
 * requests whose trace starts at a client layer (a load generator that sent trace context): TTFT as
 * the client saw it and as the server side saw it, per percentile, the gap between them, and the
 * mean of the two components that make it up (the way to the gateway and back). Both percentiles
 * are taken over the same requests.
 *
 * @param requests requests with a client layer (none: the section is left out)
 * @param client client TTFT p50/p90/p99 in ns
 * @param server server TTFT p50/p90/p99 in ns
 */
public record ClientServerGap(
    long requests,
    double[] client,
    double[] server,
    double toGatewayMeanNs,
    double toClientMeanNs) {
  static final double[] LEVELS = {0.5, 0.9, 0.99};

  /** The requests that arrived from {@code fromNs} on, as {@link AttributionReport} reads them. */
  public static ClientServerGap load(ClickHouseStore store, long fromNs) {
    List<String> row =
        store
            .query(
                "SELECT count(), quantilesExact(0.5, 0.9, 0.99)(TtftNs), quantilesExact(0.5, 0.9, 0.99)(ServerTtftNs),"
                    + " avg(ClientToGatewayNs), avg(GatewayToClientNs) FROM llm_request_attribution FINAL"
                    + " WHERE ArrivalTime >= fromUnixTimestamp64Nano({from_ns:Int64}) AND TtftStartLayer = 'client'",
                Map.of("from_ns", fromNs))
            .rows()
            .get(0);
    long n = Long.parseLong(row.get(0));
    if (n == 0) {
      return new ClientServerGap(0, new double[3], new double[3], 0, 0);
    }
    return new ClientServerGap(
        n,
        array(row.get(1)),
        array(row.get(2)),
        Double.parseDouble(row.get(3)),
        Double.parseDouble(row.get(4)));
  }

  private static double[] array(String text) {
    String[] parts = text.replace("[", "").replace("]", "").split(",");
    double[] out = new double[LEVELS.length];
    for (int i = 0; i < out.length && i < parts.length; i++) {
      out[i] = Double.parseDouble(parts[i].trim());
    }
    return out;
  }

  public void printText(PrintWriter out) {
    if (requests == 0) {
      return;
    }
    out.printf("Client vs server TTFT (%d requests sent with trace context):%n", requests);
    out.printf("  %-4s %12s %12s %12s%n", "", "client", "server", "gap");
    for (int i = 0; i < LEVELS.length; i++) {
      out.printf(
          "  p%-3d %9.1f ms %9.1f ms %9.1f ms%n",
          Math.round(LEVELS[i] * 100),
          client[i] / 1e6,
          server[i] / 1e6,
          (client[i] - server[i]) / 1e6);
    }
    out.printf(
        "  mean way to the gateway %.1f ms, back to the client %.1f ms (client_to_gateway, gateway_to_client)%n%n",
        toGatewayMeanNs / 1e6, toClientMeanNs / 1e6);
  }

  /** The section as HTML, or "" without client-layer requests. */
  public String html() {
    if (requests == 0) {
      return "";
    }
    StringBuilder h =
        new StringBuilder("<h2>Client vs server TTFT</h2><p>")
            .append(requests)
            .append(
                " requests sent with trace context: TTFT as the client saw it, as the server side saw it, and the gap.</p>")
            .append("<table><tr><th></th><th>client</th><th>server</th><th>gap</th></tr>");
    for (int i = 0; i < LEVELS.length; i++) {
      h.append(
          String.format(
              "<tr><td>p%d</td><td>%.1f ms</td><td>%.1f ms</td><td>%.1f ms</td></tr>",
              Math.round(LEVELS[i] * 100),
              client[i] / 1e6,
              server[i] / 1e6,
              (client[i] - server[i]) / 1e6));
    }
    return h.append(
            String.format(
                "</table><p>Mean way to the gateway %.1f ms, back to the client %.1f ms.</p>",
                toGatewayMeanNs / 1e6, toClientMeanNs / 1e6))
        .toString();
  }
}
