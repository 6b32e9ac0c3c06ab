package dev.llmlat.cli;

/**
 * A top-level command that lives outside this module (the benchmarks), added to {@code llmlat} when
 * its jar is on the class path: implement it on a picocli {@code @Command} class with a public
 * no-argument constructor and list that class in {@code
 * META-INF/services/dev.llmlat.cli.PluggedCommand}. The CLI never depends on such modules.
 */
public interface PluggedCommand {}
