package dev.llmlat.store.confine;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What a client of {@code store serve} may reach besides the store's own tables: nothing of the
 * host (no file, no executable, no other host, no SYSTEM statement that stops or reconfigures the
 * engine), unless a source is named in {@code allowedSources}.
 *
 * <p>It is enforced twice. The engine boots with access control of its own ({@link
 * EngineAccessConfig}): grants without sources, writes to files or SYSTEM, settings that name files
 * held constant. What chDB does not confine (measured on 26.5.3: the scalar {@code file()},
 * EXECUTABLE and HTTP dictionary sources, {@code hasColumnInTable} with a host, reads by table
 * functions once our own staged inserts need {@code READ ON FILE}, INTO OUTFILE, custom disks) is
 * decided on the statement as the engine parses it ({@link StatementCheck}), against the
 * allow-lists here.
 *
 * @param allowedSources the sources {@code --allow-sources} names
 */
public record Confinement(Set<ExternalSource> allowedSources) {
  /** Nothing outside the store. */
  public static final Confinement STRICT = new Confinement(Set.of());

  /** Table functions that read only the store or generate data. */
  private static final Set<String> LOCAL_TABLE_FUNCTIONS =
      Set.of(
          "numbers",
          "numbers_mt",
          "zeros",
          "zeros_mt",
          "generateRandom",
          "generateSeries",
          "generate_series",
          "primes",
          "values",
          "SQLStandardValues",
          "null",
          "merge",
          "view",
          "viewIfPermitted",
          "viewExplain",
          "input",
          "format",
          "dictionary",
          "loop",
          "mergeTreeIndex",
          "mergeTreeProjection",
          "mergeTreeTextIndex",
          "mergeTreeAnalyzeIndexes",
          "mergeTreeAnalyzeIndexesUUID",
          "fuzzJSON",
          "fuzzQuery",
          "timeSeriesData",
          "timeSeriesMetrics",
          "timeSeriesTags",
          "timeSeriesSelector");

  /** Table engines that keep their data in the store, or none. */
  private static final Set<String> LOCAL_TABLE_ENGINES =
      Set.of(
          "MergeTree",
          "ReplacingMergeTree",
          "SummingMergeTree",
          "AggregatingMergeTree",
          "CollapsingMergeTree",
          "VersionedCollapsingMergeTree",
          "GraphiteMergeTree",
          "CoalescingMergeTree",
          "Memory",
          "Log",
          "TinyLog",
          "StripeLog",
          "Null",
          "Set",
          "Join",
          "Buffer",
          "Merge",
          "Dictionary",
          "View",
          "MaterializedView",
          "GenerateRandom",
          "Alias",
          "TimeSeries");

  private static final Set<String> LOCAL_DATABASE_ENGINES =
      Set.of("Atomic", "Ordinary", "Memory", "Dictionary", "Lazy");

  /**
   * Dictionary sources as EXPLAIN AST prints them; CLICKHOUSE only without a host (StatementCheck
   * looks at its keys).
   */
  private static final Set<String> LOCAL_DICTIONARY_SOURCES = Set.of("clickhouse", "null");

  /**
   * Functions that reach files or hosts whatever the grants say (measured: chDB checks none for
   * them).
   */
  static final Set<String> HOST_FUNCTIONS = Set.of("file", "hascolumnintable", "catboostevaluate");

  public Confinement {
    allowedSources =
        allowedSources.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(allowedSources));
  }

  /** {@code --allow-sources LIST}: a comma-separated list of {@link ExternalSource#flagName()}s. */
  public static Confinement allowing(String list) {
    return new Confinement(ExternalSource.parseList(list));
  }

  boolean allowsTableFunction(String name) {
    return LOCAL_TABLE_FUNCTIONS.contains(name)
        || allowedSources.stream().anyMatch(s -> s.tableFunctions.contains(name));
  }

  boolean allowsEngine(String name) {
    return LOCAL_TABLE_ENGINES.contains(name)
        || LOCAL_DATABASE_ENGINES.contains(name)
        || allowedSources.stream()
            .anyMatch(s -> s.tableEngines.contains(name) || s.databaseEngines.contains(name));
  }

  boolean allowsDictionarySource(String name) {
    return LOCAL_DICTIONARY_SOURCES.contains(name)
        || allowedSources.stream().anyMatch(s -> s.dictionarySources.contains(name));
  }

  /** A CLICKHOUSE dictionary source may name another host only where {@code remote} is allowed. */
  boolean allowsRemoteClickHouse() {
    return allowedSources.contains(ExternalSource.REMOTE);
  }

  /** The engines the grants must name for the allowed sources. */
  Set<String> allowedSourceEngines() {
    return allowedSources.stream()
        .flatMap(s -> Stream.concat(s.tableEngines.stream(), s.databaseEngines.stream()))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /** For messages: {@code none}, or the flag names. */
  public String describe() {
    return allowedSources.isEmpty()
        ? "none"
        : allowedSources.stream()
            .map(ExternalSource::flagName)
            .sorted()
            .collect(Collectors.joining(","));
  }

  static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }
}
