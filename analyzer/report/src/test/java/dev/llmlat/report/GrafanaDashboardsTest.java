package dev.llmlat.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.confine.Confinement;
import dev.llmlat.store.http.ClickHouseHttpServer;
import dev.llmlat.store.http.ServerConfig;
import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Grafana files in schemas/grafana: the provisioning YAML parses and names the ClickHouse
 * plugin over HTTP, and every panel query of every dashboard, expanded the way Grafana and the
 * plugin expand it, answers over HTTP from a confined store ({@code store serve}'s) filled from the
 * real h200-e2e capture and attributed, with the columns its panel type needs.
 *
 * <p>Expansion, as grafana/clickhouse-datasource v4 does it (read from its source: CHDatasource.ts
 * applyConditionalAll, pkg/macros/macros.go, and grafana/sqlds's macro matcher):
 *
 * <ol>
 *   <li>in the browser, {@code $__conditionalAll(cond, $var)} becomes {@code 1=1} when the
 *       variable's current value is All ({@code $__all}) or empty, else {@code cond}; then
 *       Grafana's template service replaces {@code $var}, {@code ${var}}, {@code ${var:format}} and
 *       {@code [[var]]} (All on a multi-value variable without allValue means every option; no
 *       format means the plugin's own: a list as {@code 'a','b'}, a single value raw; {@code
 *       singlequote} quotes each value and escapes its quotes);
 *   <li>in the plugin's backend: {@code $__timeFilter(c)} is {@code c >= toDateTime(from_s) AND c
 *       <= toDateTime(to_s)}, {@code _ms} variants use {@code fromUnixTimestamp64Milli}, {@code
 *       $__fromTime}/{@code $__toTime} are {@code toDateTime(s)}, {@code $__interval_s} is the
 *       interval in whole seconds (at least 1), {@code $__timeInterval(c)} is {@code
 *       toStartOfInterval(toDateTime(c), INTERVAL n second)}.
 * </ol>
 *
 * Assumed, not read: target {@code format} 0 is time series, 1 table, 3 trace (sqlutil's
 * FormatQueryOption order); a query variable's {@code query} object with {@code rawSql} runs the
 * same way through the plugin's variable support (old and new). The time range is fixed around the
 * capture, the interval at 1 s (what Grafana picks for that range at dashboard width).
 */
class GrafanaDashboardsTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String PASSWORD = "grafana-test-password";
  static final Pattern NUMERIC =
      Pattern.compile("(Nullable\\()?(U?Int\\d+|Float\\d+|Decimal.*)\\)?");
  static final Pattern FIELD_REF =
      Pattern.compile("\\$\\{__data\\.fields(?:\\.([A-Za-z0-9_]+)|\\[\"([^\"]+)\"])}");
  static final String TTFT_PANEL = "TTFT p50 / p90 / p99 (lines) and mean components (stacked)";
  static final Set<String> TRACE_COLUMNS =
      Set.of(
          "traceID",
          "spanID",
          "parentSpanID",
          "serviceName",
          "operationName",
          "startTime",
          "duration");

  @TempDir static Path dir;
  static EmbeddedClickHouse store;
  static ClickHouseHttpServer server;
  static HttpClient http = HttpClient.newHttpClient();
  static JsonNode datasource; // the provisioned one, after Grafana's environment interpolation
  static String url;
  static long fromS;
  static long toS;
  static String slowestTrace;

  static Path grafana() {
    return Path.of(System.getProperty("user.dir"))
        .toAbsolutePath()
        .getParent()
        .getParent()
        .resolve("schemas/grafana");
  }

  @BeforeAll
  static void serveTheCapture() throws IOException {
    store =
        EmbeddedClickHouse.openConfined(
            dir.resolve("ch"), EngineLibrary.locate(), Confinement.STRICT);
    assertThat(H200CaptureStore.populate(store, dir)).isEqualTo(16);
    server =
        ClickHouseHttpServer.start(
            store, ServerConfig.loopbackWithoutPassword(0).withPassword(PASSWORD));
    // Grafana reads the provisioning file with these in its environment
    Map<String, String> env =
        Map.of(
            "LLMLAT_STORE_HOST",
            "127.0.0.1",
            "LLMLAT_STORE_PORT",
            Integer.toString(server.port()),
            "LLMLAT_STORE_PASSWORD",
            PASSWORD);
    String yaml = Files.readString(grafana().resolve("provisioning/datasources/llmlat.yaml"));
    datasource = new YAMLMapper().readTree(interpolateEnv(yaml, env)).get("datasources").get(0);
    JsonNode j = datasource.get("jsonData");
    url =
        j.get("protocol").asText()
            + "://"
            + j.get("host").asText()
            + ":"
            + j.get("port").asText()
            + j.path("path").asText("");
    List<String> range =
        store
            .query(
                "SELECT toUnixTimestamp(min(ArrivalTime)), toUnixTimestamp(max(ArrivalTime)),"
                    + " argMax(TraceId, TtftNs) FROM llm_request_attribution FINAL")
            .rows()
            .get(0);
    fromS = Long.parseLong(range.get(0)) - 300;
    toS = Long.parseLong(range.get(1)) + 300;
    slowestTrace = range.get(2);
  }

  @AfterAll
  static void close() {
    if (server != null) {
      server.close();
    }
    if (store != null) {
      store.close();
    }
  }

  /** Grafana's provisioning reads $VAR and ${VAR} from its environment. */
  static String interpolateEnv(String text, Map<String, String> env) {
    Matcher m = Pattern.compile("\\$\\{(\\w+)}|\\$(\\w+)").matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String name = m.group(1) != null ? m.group(1) : m.group(2);
      m.appendReplacement(out, Matcher.quoteReplacement(env.getOrDefault(name, "")));
    }
    return m.appendTail(out).toString();
  }

  @Test
  void theProvisioningFilesParseAndNameThePluginOverHttp() throws IOException {
    JsonNode raw =
        new YAMLMapper()
            .readTree(grafana().resolve("provisioning/datasources/llmlat.yaml").toFile());
    assertThat(raw.get("apiVersion").asInt()).isEqualTo(1);
    JsonNode ds = raw.get("datasources").get(0);
    assertThat(ds.get("type").asText()).isEqualTo("grafana-clickhouse-datasource");
    assertThat(ds.get("uid").asText()).isEqualTo("llmlat-clickhouse");
    assertThat(ds.at("/jsonData/protocol").asText()).isEqualTo("http");
    assertThat(ds.at("/jsonData/username").asText()).isEqualTo("default");
    assertThat(ds.at("/jsonData/defaultDatabase").asText()).isEqualTo("default");
    assertThat(ds.at("/jsonData/host").asText()).isEqualTo("$LLMLAT_STORE_HOST");
    assertThat(ds.at("/secureJsonData/password").asText())
        .isEqualTo("$LLMLAT_STORE_PASSWORD"); // never in the file
    assertThat(ds.at("/jsonData/traces/defaultTable").asText()).isEqualTo("otel_traces");
    // the port arrives as a string after interpolation: the plugin parses either
    assertThat(Long.parseLong(datasource.at("/jsonData/port").asText())).isEqualTo(server.port());

    JsonNode providers =
        new YAMLMapper()
            .readTree(grafana().resolve("provisioning/dashboards/llmlat.yaml").toFile());
    assertThat(providers.get("apiVersion").asInt()).isEqualTo(1);
    JsonNode p = providers.get("providers").get(0);
    assertThat(p.get("type").asText()).isEqualTo("file");
    assertThat(p.at("/options/path").asText()).startsWith("/");

    // the provisioned credentials reach the served store; a wrong password does not
    assertThat(post("SELECT 1", PASSWORD).statusCode()).isEqualTo(200);
    assertThat(post("SELECT 1", "wrong").statusCode()).isNotEqualTo(200);
  }

  @Test
  void theStackedComponentsAreEveryComponentOfTtft() throws IOException {
    // the stack sums to the mean TTFT only if it holds every component the attribution has
    String ttft = Files.readString(grafana().resolve("dashboards/llmlat-ttft.json"));
    String slowest = Files.readString(grafana().resolve("dashboards/llmlat-requests.json"));
    for (TtftComponent c : TtftComponent.all()) {
      String component = c.id();
      String column = c.column();
      assertThat(ttft).as("TTFT dashboard stacks " + column).contains("avg(" + column + ")");
      assertThat(slowest)
          .as("slowest requests name " + column + " as the largest part")
          .contains(column);
    }
  }

  @Test
  void everyPanelQueryAnswersWithTheColumnsItsPanelNeeds() throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.list(grafana().resolve("dashboards"))) {
      files = s.filter(f -> f.toString().endsWith(".json")).sorted().toList();
    }
    assertThat(files)
        .extracting(f -> f.getFileName().toString())
        .containsExactly("llmlat-requests.json", "llmlat-ttft.json");
    Set<String> uids = new TreeSet<>();
    List<JsonNode> dashboards = new ArrayList<>();
    for (Path f : files) {
      JsonNode d = JSON.readTree(f.toFile());
      assertThat(uids.add(d.get("uid").asText())).as("unique uid").isTrue();
      dashboards.add(d);
    }
    int queries = 0;
    Map<String, Integer> ttftRows = new LinkedHashMap<>();
    for (JsonNode d : dashboards) {
      String name = d.get("uid").asText();
      Dashboard dash = new Dashboard(d);
      for (JsonNode link : d.get("links")) {
        assertThat(uids)
            .as(name + " link")
            .contains(link.get("url").asText().replaceAll("^/d/([^?/]+).*", "$1"));
      }
      // two settings of the filters: All (conditionalAll drops them), then each one's first value
      for (boolean all : new boolean[] {true, false}) {
        Map<String, List<String>> values = dash.values(all);
        for (JsonNode panel : d.get("panels")) {
          String title =
              name + " / " + panel.get("title").asText() + (all ? " (All)" : " " + values);
          assertThat(panel.at("/datasource/type").asText())
              .as(title)
              .isEqualTo("grafana-clickhouse-datasource");
          assertThat(panel.at("/datasource/uid").asText()).as(title).isEqualTo("${datasource}");
          for (JsonNode t : panel.get("targets")) {
            assertThat(t.at("/datasource/uid").asText()).as(title).isEqualTo("${datasource}");
            assertThat(t.get("editorType").asText()).isEqualTo("sql");
            String sql = dash.expand(t.get("rawSql").asText(), values);
            Answer a = query(sql, title + " " + t.get("refId").asText());
            queries++;
            checkShape(panel, t, a, title);
            if (panel.get("title").asText().equals(TTFT_PANEL)) {
              ttftRows.merge(title, a.rows.size(), Integer::sum);
              assertThat(a.rows).as(title + " " + t.get("refId").asText()).isNotEmpty();
            }
            if (panel.get("type").asText().equals("stat")) {
              assertThat(a.rows).as(title).hasSize(1);
            }
            if (panel.get("title").asText().equals("Slowest requests")) {
              assertThat(a.rows).as(title).hasSize(16);
              assertThat(a.rows.get(0).get("TraceId").asText()).isEqualTo(slowestTrace);
              assertThat(a.rows.get(0).get("explain").asText())
                  .isEqualTo("llmlat explain " + slowestTrace);
              checkTraceLinks(panel, dash, values, uids);
            }
          }
        }
      }
    }
    assertThat(ttftRows).hasSize(2);
    assertThat(queries).isGreaterThanOrEqualTo(30);
  }

  @Test
  void theSloStatsAgreeWithAWilsonIntervalComputedHere() throws IOException {
    JsonNode d = JSON.readTree(grafana().resolve("dashboards/llmlat-ttft.json").toFile());
    Dashboard dash = new Dashboard(d);
    for (String slo : List.of("500", "150", "1")) {
      Map<String, List<String>> values = dash.values(true);
      values.put("slo_ms", List.of(slo));
      List<String> nk =
          store
              .query(
                  "SELECT count(), countIf(TtftNs > "
                      + slo
                      + " * 1e6) FROM llm_request_attribution FINAL")
              .rows()
              .get(0);
      double n = Double.parseDouble(nk.get(0));
      double p = Double.parseDouble(nk.get(1)) / n;
      double z = 1.96;
      double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
      double half = z * Math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
      Map<String, Double> expected =
          Map.of(
              "Over SLO",
              100 * p,
              "Wilson low",
              100 * (centre - half),
              "Wilson high",
              100 * (centre + half));
      for (JsonNode panel : d.get("panels")) {
        Double want = expected.get(panel.get("title").asText());
        if (want != null) {
          Answer a =
              query(
                  dash.expand(panel.get("targets").get(0).get("rawSql").asText(), values),
                  panel.get("title").asText());
          assertThat(a.rows.get(0).get(a.columns.keySet().iterator().next()).asDouble())
              .as(panel.get("title").asText() + " at " + slo + " ms")
              .isCloseTo(want, org.assertj.core.data.Offset.offset(1e-9));
        }
      }
    }
  }

  /**
   * The slowest-requests table links each trace id to this dashboard's trace panel and to Explore;
   * both render its trace.
   */
  void checkTraceLinks(
      JsonNode panel, Dashboard dash, Map<String, List<String>> values, Set<String> uids)
      throws IOException {
    List<String> urls = new ArrayList<>();
    panel.at("/fieldConfig/defaults").path("links").forEach(l -> urls.add(l.get("url").asText()));
    panel
        .at("/fieldConfig/overrides")
        .forEach(
            o ->
                o.get("properties")
                    .forEach(
                        p -> {
                          if (p.get("id").asText().equals("links")) {
                            p.get("value").forEach(l -> urls.add(l.get("url").asText()));
                          }
                        }));
    assertThat(urls).hasSize(2);
    String local = urls.stream().filter(u -> u.startsWith("/d/")).findFirst().orElseThrow();
    assertThat(uids).contains(local.replaceAll("^/d/([^?/]+).*", "$1"));
    assertThat(local).contains("var-trace_id=${__data.fields.TraceId}");
    assertThat(dash.variables).containsKey("trace_id");
    String explore = urls.stream().filter(u -> u.startsWith("/explore?")).findFirst().orElseThrow();
    String panes = explore.replaceAll(".*[?&]panes=([^&]*).*", "$1");
    JsonNode pane =
        JSON.readTree(URLDecoder.decode(panes, StandardCharsets.UTF_8)).elements().next();
    assertThat(pane.get("datasource").asText()).isEqualTo("${datasource}");
    JsonNode q = pane.get("queries").get(0);
    assertThat(q.get("queryType").asText()).isEqualTo("traces");
    assertThat(q.get("format").asInt()).isEqualTo(3);
    Answer viaExplore =
        query(
            q.get("rawSql").asText().replace("${__data.fields.TraceId}", slowestTrace),
            "Explore trace link");
    assertThat(viaExplore.columns.keySet()).containsAll(TRACE_COLUMNS);
    // the gateway's two spans, the engine's request and its steps
    assertThat(viaExplore.rows.size()).isGreaterThanOrEqualTo(3);
    assertThat(viaExplore.rows).allMatch(r -> r.get("traceID").asText().equals(slowestTrace));
    Map<String, List<String>> withTrace = new LinkedHashMap<>(values);
    withTrace.put("trace_id", List.of(slowestTrace));
    for (JsonNode p : dash.json.get("panels")) {
      if (p.get("type").asText().equals("traces")) {
        Answer a =
            query(
                dash.expand(p.get("targets").get(0).get("rawSql").asText(), withTrace),
                "trace panel");
        assertThat(a.rows).hasSameSizeAs(viaExplore.rows);
      }
    }
  }

  static void checkShape(JsonNode panel, JsonNode target, Answer a, String title) {
    List<String> names = new ArrayList<>(a.columns.keySet());
    String type = panel.get("type").asText();
    switch (type) {
      case "timeseries" -> {
        assertThat(target.get("format").asInt()).as(title).isZero();
        assertThat(names.get(0)).as(title).isEqualTo("time");
        assertThat(a.columns.get("time")).as(title).startsWith("DateTime");
        assertThat(names.size()).as(title).isGreaterThan(1);
        names
            .subList(1, names.size())
            .forEach(n -> assertThat(a.columns.get(n)).as(title + " " + n).matches(NUMERIC));
      }
      case "stat" -> {
        assertThat(names).as(title).hasSize(1);
        assertThat(a.columns.get(names.get(0))).as(title).matches(NUMERIC);
      }
      case "barchart" -> {
        String x = panel.at("/options/xField").asText();
        assertThat(a.columns.get(x)).as(title).contains("String");
        names.stream()
            .filter(n -> !n.equals(x))
            .forEach(n -> assertThat(a.columns.get(n)).as(title + " " + n).matches(NUMERIC));
      }
      case "table" -> {
        assertThat(target.get("format").asInt()).as(title).isEqualTo(1);
        Matcher m = FIELD_REF.matcher(panel.get("fieldConfig").toString());
        while (m.find()) {
          assertThat(names)
              .as(title + " data link")
              .contains(m.group(1) != null ? m.group(1) : m.group(2));
        }
        panel
            .path("fieldConfig")
            .path("overrides")
            .forEach(
                o -> {
                  if (o.at("/matcher/id").asText().equals("byName")) {
                    assertThat(names)
                        .as(title + " override")
                        .contains(o.at("/matcher/options").asText());
                  }
                });
        panel
            .path("transformations")
            .forEach(
                t ->
                    t.at("/options/excludeByName")
                        .fieldNames()
                        .forEachRemaining(
                            n -> assertThat(names).as(title + " hidden column").contains(n)));
      }
      case "traces" -> {
        assertThat(target.get("format").asInt()).as(title).isEqualTo(3);
        assertThat(names).as(title).containsAll(TRACE_COLUMNS);
      }
      default ->
          throw new AssertionError(title + ": a panel type this test does not know: " + type);
    }
  }

  record Answer(Map<String, String> columns, List<JsonNode> rows) {}

  static HttpResponse<String> post(String sql, String password) throws IOException {
    JsonNode j = datasource.get("jsonData");
    String auth =
        Base64.getEncoder()
            .encodeToString(
                (j.get("username").asText() + ":" + password).getBytes(StandardCharsets.UTF_8));
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create(
                    url + "/?default_format=JSON&database=" + j.get("defaultDatabase").asText()))
            .header("Authorization", "Basic " + auth)
            .POST(HttpRequest.BodyPublishers.ofString(sql))
            .build();
    try {
      return http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  static Answer query(String sql, String what) throws IOException {
    HttpResponse<String> r = post(sql, datasource.at("/secureJsonData/password").asText());
    assertThat(r.statusCode()).as(what + "\n" + sql + "\n" + r.body()).isEqualTo(200);
    JsonNode body = JSON.readTree(r.body());
    Map<String, String> columns = new LinkedHashMap<>();
    body.get("meta").forEach(m -> columns.put(m.get("name").asText(), m.get("type").asText()));
    List<JsonNode> rows = new ArrayList<>();
    body.get("data").forEach(rows::add);
    return new Answer(columns, rows);
  }

  /** One dashboard's variables and the expansion of its queries. */
  final class Dashboard {
    final JsonNode json;
    final Map<String, JsonNode> variables = new LinkedHashMap<>();
    final Map<String, List<String>> options =
        new LinkedHashMap<>(); // a query variable's values, from its own query

    Dashboard(JsonNode json) throws IOException {
      this.json = json;
      for (JsonNode v : json.at("/templating/list")) {
        variables.put(v.get("name").asText(), v);
      }
      assertThat(variables.get("datasource").get("current").get("value").asText())
          .isEqualTo(datasource.get("uid").asText());
      for (JsonNode v : variables.values()) {
        if (v.get("type").asText().equals("query")) {
          assertThat(v.get("datasource").get("uid").asText()).isEqualTo("${datasource}");
          Answer a =
              query(
                  expand(v.at("/query/rawSql").asText(), Map.of()),
                  "variable " + v.get("name").asText());
          assertThat(a.columns).hasSize(1);
          String column = a.columns.keySet().iterator().next();
          List<String> values = new ArrayList<>();
          a.rows.forEach(r -> values.add(r.get(column).asText()));
          assertThat(values).as("variable " + v.get("name").asText()).isNotEmpty();
          options.put(v.get("name").asText(), values);
        }
      }
    }

    /**
     * Every variable's value: its saved current value, with filters at All or at their first
     * option.
     */
    Map<String, List<String>> values(boolean all) {
      Map<String, List<String>> out = new LinkedHashMap<>();
      for (JsonNode v : variables.values()) {
        String name = v.get("name").asText();
        if (options.containsKey(name)) {
          out.put(name, all ? List.of("$__all") : List.of(options.get(name).get(0)));
        } else {
          out.put(name, List.of(v.at("/current/value").asText()));
        }
      }
      return out;
    }

    String expand(String sql, Map<String, List<String>> values) {
      String s = conditionalAll(sql, values);
      s = templateReplace(s, values);
      s = backendMacros(s);
      assertThat(s)
          .as("unexpanded in\n" + s)
          .doesNotContain("$__")
          .doesNotContain("${")
          .doesNotContain("[[");
      assertThat(Pattern.compile("\\$\\w").matcher(s).find())
          .as("a variable left in\n" + s)
          .isFalse();
      return s;
    }

    /**
     * CHDatasource.applyConditionalAll: last occurrence first, arguments split at depth-1 commas.
     */
    String conditionalAll(String sql, Map<String, List<String>> values) {
      String macro = "$__conditionalAll(";
      int at = sql.lastIndexOf(macro);
      while (at != -1) {
        List<String> args = macroArgs(sql, at + macro.length() - 1);
        assertThat(args).as("conditionalAll arguments").hasSize(2);
        String var = args.get(1).strip();
        List<String> value = values.get(var.substring(1));
        assertThat(value).as("conditionalAll names a variable: " + var).isNotNull();
        String joined = String.join(",", value);
        String phrase = joined.isEmpty() || joined.equals("$__all") ? "1=1" : args.get(0);
        sql = sql.replace(macro + args.get(0) + "," + args.get(1) + ")", phrase);
        at = sql.lastIndexOf(macro);
      }
      return sql;
    }

    /** Grafana's templateSrv.replace with the plugin's default formatter. */
    String templateReplace(String sql, Map<String, List<String>> values) {
      Matcher m =
          Pattern.compile(
                  "\\$(\\w+)|\\[\\[(\\w+?)(?::(\\w+))?]]|\\$\\{(\\w+)(?:\\.([^:^}]+))?(?::([^}]+))?}")
              .matcher(sql);
      StringBuilder out = new StringBuilder();
      while (m.find()) {
        String name =
            m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(4);
        String format = m.group(3) != null ? m.group(3) : m.group(6);
        List<String> value = values.get(name);
        if (value == null) {
          m.appendReplacement(
              out, Matcher.quoteReplacement(m.group())); // not a variable: the backend's macro
          continue;
        }
        if (value.equals(List.of("$__all"))) {
          value = options.get(name); // All without an allValue: every option
        }
        boolean multi = variables.get(name).path("multi").asBoolean(false) || value.size() > 1;
        String text;
        if ("singlequote".equals(format)) {
          text =
              String.join(",", value.stream().map(x -> "'" + x.replace("'", "\\'") + "'").toList());
        } else if (format == null && multi) {
          text = "'" + String.join("','", value) + "'";
        } else if (format == null || "raw".equals(format)) {
          text = String.join(",", value);
        } else {
          throw new AssertionError("a format this test does not expand: " + format);
        }
        m.appendReplacement(out, Matcher.quoteReplacement(text));
      }
      return m.appendTail(out).toString();
    }

    /** pkg/macros: the plugin backend's macros for the fixed range and a 1 s interval. */
    String backendMacros(String sql) {
      long intervalS = 1;
      Matcher m = Pattern.compile("\\$__(\\w+)\\b").matcher(sql);
      StringBuilder out = new StringBuilder();
      int last = 0;
      while (m.find(last)) {
        out.append(sql, last, m.start());
        String name = m.group(1);
        int end = m.end();
        List<String> args = List.of();
        if (end < sql.length() && sql.charAt(end) == '(') {
          args = macroArgs(sql, end).stream().map(String::strip).toList();
          end = closingParen(sql, end) + 1;
        }
        String from = "toDateTime(" + fromS + ")";
        String to = "toDateTime(" + toS + ")";
        String fromMs = "fromUnixTimestamp64Milli(" + fromS * 1000 + ")";
        String toMs = "fromUnixTimestamp64Milli(" + toS * 1000 + ")";
        out.append(
            switch (name) {
              case "timeFilter" ->
                  args.get(0) + " >= " + from + " AND " + args.get(0) + " <= " + to;
              case "timeFilter_ms" ->
                  args.get(0) + " >= " + fromMs + " AND " + args.get(0) + " <= " + toMs;
              case "fromTime" -> from;
              case "toTime" -> to;
              case "fromTime_ms" -> fromMs;
              case "toTime_ms" -> toMs;
              case "interval_s" -> Long.toString(intervalS);
              case "timeInterval" ->
                  "toStartOfInterval(toDateTime("
                      + args.get(0)
                      + "), INTERVAL "
                      + intervalS
                      + " second)";
              default -> throw new AssertionError("a macro this test does not expand: $__" + name);
            });
        last = end;
      }
      return out.append(sql.substring(last)).toString();
    }
  }

  /**
   * The arguments of a macro whose '(' is at {@code open}, split at depth-1 commas
   * (CHDatasource.getMacroArgs).
   */
  static List<String> macroArgs(String sql, int open) {
    List<String> args = new ArrayList<>();
    int depth = 0;
    int start = open + 1;
    for (int i = open; i < sql.length(); i++) {
      char c = sql.charAt(i);
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      }
      if (c == ',' && depth == 1) {
        args.add(sql.substring(start, i));
        start = i + 1;
      }
      if (depth == 0) {
        args.add(sql.substring(start, i));
        return args;
      }
    }
    throw new AssertionError("unbalanced macro arguments at " + open + " in " + sql);
  }

  static int closingParen(String sql, int open) {
    int depth = 0;
    for (int i = open; i < sql.length(); i++) {
      depth += sql.charAt(i) == '(' ? 1 : sql.charAt(i) == ')' ? -1 : 0;
      if (depth == 0) {
        return i;
      }
    }
    throw new AssertionError("unbalanced parentheses in " + sql);
  }
}
