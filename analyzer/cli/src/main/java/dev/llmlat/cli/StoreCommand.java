package dev.llmlat.cli;

import dev.llmlat.runtime.home.LlmlatHome;
import dev.llmlat.runtime.home.StorePassword;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.StoreConfig;
import dev.llmlat.store.confine.Confinement;
import dev.llmlat.store.http.ClickHouseHttpServer;
import dev.llmlat.store.http.ServerConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "store",
    mixinStandardHelpOptions = true,
    description = "The embedded store as a process of its own.",
    subcommands = StoreCommand.Serve.class)
final class StoreCommand {

  @Command(
      name = "serve",
      mixinStandardHelpOptions = true,
      description = {
        "Owns the embedded store's data directory and serves ClickHouse's HTTP interface, so the official drivers,",
        "curl and Grafana's ClickHouse plugin reach it like a server: user default, with the password in",
        "$LLMLAT_HOME/store.password (made at the first start, mode 0600). Stops on SIGTERM.",
        "Clients reach the store's tables only: no file, program or other host of this machine, and no SYSTEM",
        "statement that stops or reconfigures the engine (code 497, ACCESS_DENIED), unless --allow-sources names one."
      })
  static final class Serve implements Callable<Integer> {
    @Mixin StoreOptions store;

    @Option(
        names = "--port",
        defaultValue = "8123",
        description = "TCP port (0: any free one). Default: ${DEFAULT-VALUE}.")
    int port;

    @Option(
        names = "--bind",
        paramLabel = "ADDRESS",
        defaultValue = "127.0.0.1",
        description =
            "Address to listen on (0.0.0.0: every interface; needs the password). Default: ${DEFAULT-VALUE}.")
    String bind;

    @Option(
        names = "--password-file",
        paramLabel = "FILE",
        description =
            "The password clients must give (its first line), made there with mode 0600 if missing. Default: $LLMLAT_HOME/store.password.")
    Path passwordFile;

    @Option(
        names = "--no-auth",
        description =
            "Serve without a password: only on a loopback address, for a machine of one user.")
    boolean noAuth;

    @Option(
        names = "--max-concurrent-queries",
        defaultValue = "8",
        description = "Queries the engine runs at once. Default: ${DEFAULT-VALUE}.")
    int maxConcurrent;

    @Option(
        names = "--max-queued-queries",
        defaultValue = "64",
        description =
            "Queries that may wait for a turn (for up to 30 s); more are answered 503. Default: ${DEFAULT-VALUE}.")
    int maxQueued;

    @Option(
        names = "--allow-sources",
        paramLabel = "LIST",
        split = ",",
        description = {
          "External sources clients may reach through the store (off by default): a comma-separated list of",
          "url, s3, azure, hdfs, remote, mysql, postgresql, mongodb, redis, jdbc, odbc, sqlite, kafka.",
          "Files of this machine and programs stay refused whatever is listed (sqlite reads SQLite files)."
        })
    java.util.List<String> allowSources = new java.util.ArrayList<>();

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
      StoreConfig config = store.config(StoreOptions.Access.WRITE);
      if (config.kind() != StoreConfig.Kind.EMBEDDED) {
        throw new IllegalArgumentException(
            "store serve serves the embedded store; --clickhouse-url points at a server already");
      }
      InetAddress address = InetAddress.getByName(bind);
      if (noAuth && passwordFile != null) {
        throw new IllegalArgumentException(
            "--no-auth and --password-file contradict each other: give one");
      }
      if (noAuth && !address.isLoopbackAddress()) {
        throw new IllegalArgumentException(
            "--no-auth is for a loopback address only (--bind 127.0.0.1); "
                + bind
                + " would let anyone on the network run SQL");
      }
      Path file =
          passwordFile != null ? passwordFile : LlmlatHome.fromEnvironment().storePassword();
      String password = noAuth ? null : StorePassword.readOrCreate(file);
      ServerConfig serverConfig =
          ServerConfig.loopbackWithoutPassword(port)
              .withBind(address)
              .withPassword(password)
              .withLimits(maxConcurrent, maxQueued, Duration.ofSeconds(30));
      // the engine would take data waiting on our stdin as part of clients' INSERTs
      dev.llmlat.store.ProcessStdin.detach();
      Confinement confinement = Confinement.allowing(String.join(",", allowSources));
      EmbeddedClickHouse embedded =
          EmbeddedClickHouse.openConfined(config.dataDir(), config.engineLibrary(), confinement);
      CountDownLatch stopped = new CountDownLatch(1);
      try {
        store.migrator().migrate(embedded);
        store.dropOrphanStagingTables(embedded);
        ClickHouseHttpServer http = ClickHouseHttpServer.start(embedded, serverConfig);
        dev.llmlat.runtime.process.ExitSequence.register(
            "stopping the store's HTTP server",
            () -> {
              http.close();
              embedded.close();
              stopped.countDown();
            },
            10_000);
        PrintWriter out = spec.commandLine().getOut();
        out.println(
            "serving "
                + embedded.description()
                + " at "
                + http.url()
                + (noAuth
                    ? " without a password"
                    : " (user default, password in " + file.toAbsolutePath() + ")")
                + (confinement.allowedSources().isEmpty()
                    ? ""
                    : "; clients may reach: " + confinement.describe()));
        out.flush();
        stopped.await();
        return 0;
      } catch (RuntimeException | IOException e) {
        embedded.close();
        throw e;
      }
    }
  }
}
