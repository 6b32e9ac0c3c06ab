package dev.llmlat.cli;

/**
 * The levels of the clients' loggers (slf4j-simple, configured in simplelogger.properties). By
 * default the ClickHouse driver and its HTTP client log errors only: their warnings are retries
 * with a stack trace each (hundreds of lines for a refused port) of a failure that llmlat says in
 * one line. {@code --verbose} shows them.
 */
final class DriverLogs {
  private static final String[] CLIENTS = {"com.clickhouse", "org.apache.hc"};

  private DriverLogs() {}

  /**
   * Lets the clients' warnings through: call before their first logger is made (each reads its
   * level once).
   */
  static void verbose() {
    for (String client : CLIENTS) {
      // a system property wins over the properties file
      System.setProperty("org.slf4j.simpleLogger.log." + client, "warn");
    }
  }
}
