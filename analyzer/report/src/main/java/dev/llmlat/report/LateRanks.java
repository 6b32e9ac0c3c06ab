package dev.llmlat.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code llmlat report --by rank}: under tensor parallelism, the ranks requests' steps waited for
 * in their collectives ({@code rank_wait}), ranked by the wait they caused, from the rows' {@code
 * LateRank*} arrays.
 *
 * @param requests requests with a rank wait
 * @param waitNs all their rank wait
 */
public record LateRanks(long requests, long waitNs, List<Rank> ranks) implements Report {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One late rank: where it ran, the wait charged to it, over how many steps and requests. */
  public record Rank(String rank, String device, long ns, long steps, long requests, long maxNs) {}

  public LateRanks {
    ranks = List.copyOf(ranks);
  }

  public static LateRanks load(ClickHouseStore store, long fromNs) {
    Map<String, Object> p = Map.of("from_ns", fromNs);
    String where = " WHERE ArrivalTime >= fromUnixTimestamp64Nano({from_ns:Int64})";
    List<String> total =
        store
            .query(
                "SELECT countIf(RankWaitNs > 0), sum(RankWaitNs) FROM llm_request_attribution FINAL"
                    + where,
                p)
            .rows()
            .get(0);
    List<Rank> ranks = new ArrayList<>();
    for (List<String> r :
        store
            .query(
                "SELECT rank, device, sum(ns) AS total, sum(steps), uniqExact(TraceId), max(ns)"
                    + " FROM llm_request_attribution FINAL ARRAY JOIN LateRank AS rank, LateRankDevice AS device, LateRankNs AS ns,"
                    + " LateRankSteps AS steps"
                    + where
                    + " GROUP BY rank, device ORDER BY total DESC",
                p)
            .rows()) {
      ranks.add(
          new Rank(
              r.get(0),
              r.get(1),
              Long.parseLong(r.get(2)),
              Long.parseLong(r.get(3)),
              Long.parseLong(r.get(4)),
              Long.parseLong(r.get(5))));
    }
    return new LateRanks(Long.parseLong(total.get(0)), Long.parseLong(total.get(1)), ranks);
  }

  @Override
  public void printText(PrintWriter out) {
    if (requests == 0) {
      out.println(
          "no request waited for a late tensor-parallel rank (steps on one rank, or no GPU layer)");
      return;
    }
    out.printf(
        "late ranks (%d requests waited %.3f ms in all in collectives for a late rank):%n",
        requests, waitNs / 1e6);
    for (Rank r : ranks) {
      out.printf(
          "  %-8s %-24s %12.3f ms %6.1f%%  %5d steps, %5d requests, longest %.3f ms%n",
          r.rank(),
          r.device(),
          r.ns() / 1e6,
          100.0 * r.ns() / waitNs,
          r.steps(),
          r.requests(),
          r.maxNs() / 1e6);
    }
  }

  @Override
  public String json() {
    ObjectNode root = JSON.createObjectNode();
    root.put("by", "rank");
    root.put("requests", requests);
    root.put("rank_wait_ns", waitNs);
    ArrayNode a = root.putArray("ranks");
    ranks.forEach(
        r ->
            a.addObject()
                .put("rank", r.rank())
                .put("device", r.device())
                .put("wait_ns", r.ns())
                .put("steps", r.steps())
                .put("requests", r.requests())
                .put("longest_ns", r.maxNs()));
    return root.toPrettyString() + "\n";
  }

  @Override
  public String html() {
    StringBuilder h =
        new StringBuilder(HtmlPage.head("llmlat report by rank"))
            .append("<h1>Waits for a late rank</h1>");
    h.append(String.format("<p>%d requests waited %.3f ms in all.</p>", requests, waitNs / 1e6));
    h.append(
        "<table id=\"ranks\"><tr><th>rank</th><th>device</th><th>ms</th><th>steps</th><th>requests</th><th>longest ms</th></tr>");
    ranks.forEach(
        r ->
            h.append(
                String.format(
                    "<tr><td>%s</td><td>%s</td><td>%.3f</td><td>%d</td><td>%d</td><td>%.3f</td></tr>",
                    HtmlPage.escape(r.rank()),
                    HtmlPage.escape(r.device()),
                    r.ns() / 1e6,
                    r.steps(),
                    r.requests(),
                    r.maxNs() / 1e6)));
    return h.append("</table></body></html>\n").toString();
  }
}
