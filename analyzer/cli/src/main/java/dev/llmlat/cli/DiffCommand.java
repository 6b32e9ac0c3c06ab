package dev.llmlat.cli;

import dev.llmlat.report.diff.Comparison;
import dev.llmlat.report.diff.DiffHtml;
import dev.llmlat.report.diff.DiffJson;
import dev.llmlat.report.diff.DiffOptions;
import dev.llmlat.report.diff.DiffText;
import dev.llmlat.report.diff.Sample;
import dev.llmlat.report.diff.SampleComparison;
import dev.llmlat.report.diff.SampleLoader;
import dev.llmlat.report.diff.Selection;
import dev.llmlat.store.ClickHouseStore;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "diff",
    mixinStandardHelpOptions = true,
    description = {
      "Which part of TTFT moved between two sets of requests, and is it real or noise?",
      "Each side: the attributed requests of a store, of a window of arrival times,",
      "and with --by of one value of a resource or span attribute of their spans.",
      "For TTFT and each component: percentiles and mean of each side, B - A with a",
      "bootstrap 95%% interval and a verdict against the noise floor; the components",
      "that explain TTFT's change; the shift of inter-token stalls.",
      "TIME: an instant with its zone (2026-12-01T10:00:00Z), a date (UTC), now, or",
      "a duration ago (2h)."
    })
final class DiffCommand implements Callable<Integer> {
  enum Format {
    text,
    json
  }

  @Mixin StoreOptions store;

  @Option(
      names = "--a-store",
      paramLabel = "URL|DIR",
      description =
          "Side A's store: a ClickHouse server URL or an embedded data directory. Default: the store the store options pick.")
  String aStore;

  @Option(names = "--b-store", paramLabel = "URL|DIR", description = "Side B's store, likewise.")
  String bStore;

  @Option(
      names = "--a-from",
      paramLabel = "TIME",
      description = "Side A: requests that arrived at TIME or later.")
  String aFrom;

  @Option(
      names = "--a-to",
      paramLabel = "TIME",
      description = "Side A: requests that arrived before TIME.")
  String aTo;

  @Option(
      names = "--b-from",
      paramLabel = "TIME",
      description = "Side B: requests that arrived at TIME or later.")
  String bFrom;

  @Option(
      names = "--b-to",
      paramLabel = "TIME",
      description = "Side B: requests that arrived before TIME.")
  String bTo;

  @Option(
      names = "--from",
      paramLabel = "TIME",
      description =
          "Both sides, unless a side gives its own: requests that arrived at TIME or later.")
  String from;

  @Option(
      names = "--to",
      paramLabel = "TIME",
      description = "Both sides, unless a side gives its own: requests that arrived before TIME.")
  String to;

  @Option(
      names = "--by",
      paramLabel = "KEY",
      description =
          "Compare by this resource or span attribute of the requests' spans (service.version, llmlat.engine.config, a deployment label),"
              + " or by what attribution decided: instance (the engine instance), tenant, rank (a late tensor-parallel rank waited for).")
  String by;

  @Option(names = "--a", paramLabel = "VALUE", description = "With --by: side A's value.")
  String aValue;

  @Option(names = "--b", paramLabel = "VALUE", description = "With --by: side B's value.")
  String bValue;

  @Option(names = "--model", paramLabel = "NAME", description = "Only requests for this model.")
  String model;

  @Option(
      names = "--percentiles",
      paramLabel = "P",
      split = ",",
      defaultValue = "50,90,99",
      description =
          "Percentiles besides the mean. Default: ${DEFAULT-VALUE}. Each side needs 10 requests above the"
              + " highest: p50 20 requests, p90 100, p99 1000.")
  List<Double> percentiles;

  @Option(
      names = "--noise-floor-ms",
      paramLabel = "MS",
      defaultValue = "1",
      description =
          "A change smaller than this is no change, whatever its interval. Default: ${DEFAULT-VALUE}.")
  double noiseFloorMs;

  @Option(
      names = "--noise-floor-pct",
      paramLabel = "PCT",
      defaultValue = "1",
      description =
          "Nor one smaller than this percentage of side A's value. Default: ${DEFAULT-VALUE}.")
  double noiseFloorPct;

  @Option(
      names = "--format",
      defaultValue = "text",
      description = "text or json. Default: ${DEFAULT-VALUE}.")
  Format format;

  @Option(
      names = "--html",
      paramLabel = "FILE",
      description = "Also write a self-contained HTML page (no external assets).")
  Path html;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    if (!(noiseFloorMs >= 0) || Double.isInfinite(noiseFloorMs)) {
      throw new IllegalArgumentException("--noise-floor-ms must be 0 or more, got " + noiseFloorMs);
    }
    if (!(noiseFloorPct >= 0 && noiseFloorPct < 100)) {
      throw new IllegalArgumentException(
          "--noise-floor-pct is from 0 to under 100, got " + noiseFloorPct);
    }
    DiffOptions options =
        new DiffOptions(percentiles, Math.round(noiseFloorMs * 1e6), noiseFloorPct / 100);
    if ((by == null) != (aValue == null) || (by == null) != (bValue == null)) {
      throw new IllegalArgumentException(
          "--by KEY, --a VALUE and --b VALUE go together (e.g. --by service.version --a 1.4.0 --b 1.5.0)");
    }
    Selection.AttributeMatch aMatch =
        by == null ? null : new Selection.AttributeMatch(by, aValue, bValue);
    Selection.AttributeMatch bMatch =
        by == null ? null : new Selection.AttributeMatch(by, bValue, aValue);
    checkDirectory("--a-store", aStore);
    checkDirectory("--b-store", bStore);
    long now = System.currentTimeMillis() * 1_000_000L;
    long[] aWindow = window("--a-from", aFrom, "--a-to", aTo, now);
    long[] bWindow = window("--b-from", bFrom, "--b-to", bTo, now);
    boolean sameStore = aStore == null ? bStore == null : aStore.equals(bStore);
    if (sameStore && by == null) {
      if (aWindow[0] == bWindow[0] && aWindow[1] == bWindow[1]) {
        throw new IllegalArgumentException(
            "the two sides are the same requests: give each side its own window (--a-from/--a-to,"
                + " --b-from/--b-to), store (--a-store, --b-store) or value (--by KEY --a VALUE --b VALUE)");
      }
      if (aWindow[0] < bWindow[1] && bWindow[0] < aWindow[1]) {
        throw new IllegalArgumentException(
            "the two windows overlap ("
                + TimePoints.format(Math.max(aWindow[0], bWindow[0]))
                + " to "
                + TimePoints.format(Math.min(aWindow[1], bWindow[1]))
                + "): a request in both would be compared with itself");
      }
    }
    String modelName = model == null ? "" : model;
    Selection a =
        new Selection(
            label(sameStore ? null : "store " + location(aStore), aWindow, aMatch, modelName),
            aWindow[0],
            aWindow[1],
            modelName,
            aMatch);
    Selection b =
        new Selection(
            label(sameStore ? null : "store " + location(bStore), bWindow, bMatch, modelName),
            bWindow[0],
            bWindow[1],
            modelName,
            bMatch);
    // Before the comparison is computed: a path that cannot be written fails at once (exit 2).
    OutputFile htmlFile = html == null ? null : OutputFile.check("--html", html);

    List<String> notes = new ArrayList<>();
    Sample sa;
    Sample sb;
    if (sameStore) {
      try (ClickHouseStore s = open(aStore)) {
        sa = SampleLoader.load(s, a);
        sb = SampleLoader.load(s, b);
        ambiguous(s, "A", a, notes);
        if (aWindow[0] != bWindow[0] || aWindow[1] != bWindow[1]) {
          ambiguous(s, "B", b, notes);
        }
      }
    } else {
      // one at a time: the embedded engine holds one data directory per process
      try (ClickHouseStore s = open(aStore)) {
        sa = SampleLoader.load(s, a);
        ambiguous(s, "A", a, notes);
      }
      try (ClickHouseStore s = open(bStore)) {
        sb = SampleLoader.load(s, b);
        ambiguous(s, "B", b, notes);
      }
    }
    Comparison c = SampleComparison.compare(sa, sb, options).withNotes(notes);
    PrintWriter out = spec.commandLine().getOut();
    if (format == Format.json) {
      out.print(DiffJson.of(c));
    } else {
      DiffText.print(c, out);
    }
    if (htmlFile != null) {
      byte[] page = DiffHtml.page(c).getBytes(StandardCharsets.UTF_8);
      htmlFile.write(o -> o.write(page));
      (format == Format.json ? spec.commandLine().getErr() : out)
          .println("wrote " + htmlFile.path());
    }
    out.flush();
    return 0;
  }

  private ClickHouseStore open(String location) {
    return location == null
        ? store.open()
        : store.open(location.equals(aStore) ? "--a-store" : "--b-store", location);
  }

  /** Refuses at once a side's directory that holds no store (the engine would make one in it). */
  private static void checkDirectory(String option, String location) {
    if (location != null && !StoreOptions.isServerUrl(location)) {
      StoreDirectory.requireStore(option, Path.of(location));
    }
  }

  /** [from, to) of a side: its own bounds, else --from/--to, else unbounded. */
  private long[] window(
      String fromOption, String fromText, String toOption, String toText, long now) {
    String f = fromText != null ? fromText : from;
    String t = toText != null ? toText : to;
    String fOption = fromText != null ? fromOption : "--from";
    String tOption = toText != null ? toOption : "--to";
    long fromNs = f == null ? Selection.ALL_FROM : TimePoints.parse(fOption, f, now);
    long toNs = t == null ? Selection.ALL_TO : TimePoints.parse(tOption, t, now);
    if (fromNs < 0 || toNs < 0) {
      throw new IllegalArgumentException(
          (fromNs < 0 ? fOption : tOption) + ": a time before 1970 holds no requests");
    }
    if (fromNs >= toNs) {
      throw new IllegalArgumentException(
          fOption
              + " "
              + (f == null ? "(any time)" : f)
              + " must come before "
              + tOption
              + " "
              + t);
    }
    return new long[] {fromNs, toNs};
  }

  private static String location(String location) {
    return location == null ? "(default)" : location;
  }

  private static String label(
      String storeText, long[] window, Selection.AttributeMatch match, String model) {
    List<String> parts = new ArrayList<>();
    if (storeText != null) {
      parts.add(storeText);
    }
    if (match != null) {
      parts.add(match.key() + "=" + match.value());
    }
    if (window[0] != Selection.ALL_FROM || window[1] != Selection.ALL_TO) {
      parts.add(
          "arrived "
              + (window[0] == Selection.ALL_FROM ? "any time" : TimePoints.format(window[0]))
              + " to "
              + (window[1] == Selection.ALL_TO ? "now" : TimePoints.format(window[1])));
    }
    if (!model.isEmpty()) {
      parts.add("model " + model);
    }
    return parts.isEmpty() ? "all requests" : String.join(", ", parts);
  }

  private static void ambiguous(
      ClickHouseStore s, String side, Selection selection, List<String> notes) {
    long both = SampleLoader.ambiguous(s, selection);
    if (both > 0) {
      Selection.AttributeMatch m = selection.attribute();
      notes.add(
          both
              + " requests of side "
              + side
              + "'s selection carry both "
              + m.key()
              + "="
              + m.value()
              + " and "
              + m.key()
              + "="
              + m.otherValue()
              + " (on different spans): left out of both sides");
    }
  }
}
