package dev.llmlat.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Where the requests that came through a gateway lost time on the way in and out, ranked: the
 * gateway's own handling, the wait for an upstream connection (per pool, with its size), TCP
 * connect, TLS, the wire both ways, and how many requests' connection set-up nobody saw (the
 * gateway's HTTP client not instrumented).
 *
 * @param requests requests that came through a gateway
 * @param unobserved of those, the ones whose connection set-up is unknown
 * @param newConnections of those, the ones that opened a connection
 * @param causes the gateway and network components, largest first
 * @param pools the pools requests waited for, longest first (a pool's requests: those that waited 1
 *     ms or more)
 */
public record GatewayCauses(
    long requests, long unobserved, long newConnections, List<Cause> causes, List<Pool> pools) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * The gateway and network components ({@code llm_request_attribution} columns by {@link
   * TtftComponent#column}).
   */
  private static final List<TtftComponent> COMPONENTS =
      List.of(
          TtftComponent.GATEWAY_IN,
          TtftComponent.UPSTREAM_POOL_WAIT,
          TtftComponent.UPSTREAM_CONNECT,
          TtftComponent.UPSTREAM_TLS,
          TtftComponent.NETWORK_IN,
          TtftComponent.NETWORK_OUT,
          TtftComponent.GATEWAY_OUT);

  /** One component: all its time, and the requests where it was not zero. */
  public record Cause(String name, long ns, long requests) {}

  /**
   * One pool requests waited for: its key and size, the wait in all, the requests that waited, the
   * longest wait.
   */
  public record Pool(String pool, long max, long ns, long requests, long maxNs) {}

  public GatewayCauses {
    causes = List.copyOf(causes);
    pools = List.copyOf(pools);
  }

  /** The requests that arrived from {@code fromNs} on and came through a gateway. */
  public static GatewayCauses load(ClickHouseStore store, long fromNs) {
    String where =
        " FROM llm_request_attribution FINAL WHERE ArrivalTime >= fromUnixTimestamp64Nano({from_ns:Int64})"
            + " AND TtftStartLayer != 'engine'";
    Map<String, Object> params = Map.of("from_ns", fromNs);
    StringBuilder sql =
        new StringBuilder(
            "SELECT count(), countIf(UpstreamClient = ''), countIf(UpstreamConnection = 'new')");
    COMPONENTS.stream()
        .map(TtftComponent::column)
        .forEach(
            c -> sql.append(", sum(").append(c).append("), countIf(").append(c).append(" > 0)"));
    List<String> row = store.query(sql + where, params).rows().get(0);
    List<Cause> causes = new ArrayList<>();
    int i = 3;
    for (TtftComponent c : COMPONENTS) {
      causes.add(new Cause(c.id(), Long.parseLong(row.get(i)), Long.parseLong(row.get(i + 1))));
      i += 2;
    }
    causes.sort((a, b) -> Long.compare(b.ns(), a.ns()));
    List<Pool> pools = new ArrayList<>();
    for (List<String> r :
        store
            .query(
                "SELECT UpstreamPool, max(UpstreamPoolMax), sum(UpstreamPoolWaitNs) AS ns,"
                    + " countIf(UpstreamPoolWaitNs >= 1000000), max(UpstreamPoolWaitNs)"
                    + where
                    + " AND UpstreamPoolWaitNs > 0"
                    + " GROUP BY UpstreamPool ORDER BY ns DESC LIMIT 5",
                params)
            .rows()) {
      pools.add(
          new Pool(
              r.get(0),
              Long.parseLong(r.get(1)),
              Long.parseLong(r.get(2)),
              Long.parseLong(r.get(3)),
              Long.parseLong(r.get(4))));
    }
    return new GatewayCauses(
        Long.parseLong(row.get(0)),
        Long.parseLong(row.get(1)),
        Long.parseLong(row.get(2)),
        causes,
        pools);
  }

  private static String poolName(Pool p) {
    return (p.pool().isEmpty() ? "(pool not named)" : p.pool())
        + (p.max() > 0 ? " (max " + p.max() + ")" : "");
  }

  public void printText(PrintWriter out) {
    if (requests == 0) {
      return;
    }
    out.printf("gateway causes (%d requests through a gateway):%n", requests);
    for (Cause c : causes) {
      if (c.ns() > 0) {
        out.printf("  %-19s %12.3f ms  %5d requests%n", c.name(), c.ns() / 1e6, c.requests());
      }
    }
    for (Pool p : pools) {
      out.printf(
          "  waited for a connection from %s: %d requests, %.3f ms in all, longest %.3f ms%n",
          poolName(p), p.requests(), p.ns() / 1e6, p.maxNs() / 1e6);
    }
    if (newConnections > 0) {
      out.printf("  %d requests opened a new upstream connection%n", newConnections);
    }
    if (unobserved > 0) {
      out.printf(
          "  connection set-up unknown for %d requests: the gateway's HTTP client is not instrumented%n",
          unobserved);
    }
    out.println();
  }

  public ObjectNode json() {
    ObjectNode o = JSON.createObjectNode();
    o.put("requests", requests);
    o.put("connection_unknown", unobserved);
    o.put("new_connections", newConnections);
    ArrayNode a = o.putArray("causes");
    causes.forEach(
        c ->
            a.addObject()
                .put("component", c.name())
                .put("ns", c.ns())
                .put("requests", c.requests()));
    ArrayNode p = o.putArray("pools");
    pools.forEach(
        x ->
            p.addObject()
                .put("pool", x.pool())
                .put("max", x.max())
                .put("wait_ns", x.ns())
                .put("requests", x.requests())
                .put("longest_wait_ns", x.maxNs()));
    return o;
  }

  /** The section as HTML, or "" without gateway requests. */
  public String html() {
    if (requests == 0) {
      return "";
    }
    StringBuilder h =
        new StringBuilder(
            "<h2>Gateway causes</h2><table id=\"gateway-causes\"><tr><th>cause</th><th>ms</th>"
                + "<th>requests</th></tr>");
    for (Cause c : causes) {
      if (c.ns() > 0) {
        h.append(
            String.format(
                "<tr><td>%s</td><td>%.3f</td><td>%d</td></tr>",
                c.name(), c.ns() / 1e6, c.requests()));
      }
    }
    for (Pool p : pools) {
      h.append(
          String.format(
              "<tr><td>connection from %s</td><td>%.3f</td><td>%d</td></tr>",
              HtmlPage.escape(poolName(p)), p.ns() / 1e6, p.requests()));
    }
    if (unobserved > 0) {
      h.append(
          String.format(
              "<tr><td>connection set-up unknown (HTTP client not instrumented)</td><td></td><td>%d</td></tr>",
              unobserved));
    }
    return h.append("</table>").toString();
  }
}
