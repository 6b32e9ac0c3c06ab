package dev.llmlat.agent.it;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A self-signed server certificate for 127.0.0.1, made with the JDK's keytool: the server's key
 * store, and a trust store holding only that certificate for the client (PKCS12, one password).
 */
final class SelfSignedCertificate {
  private static final String PASSWORD = "llmlat-test";

  private final Path keyStore;
  private final Path trustStore;

  private SelfSignedCertificate(Path keyStore, Path trustStore) {
    this.keyStore = keyStore;
    this.trustStore = trustStore;
  }

  static SelfSignedCertificate create() throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory(TestDirs.work(), "tls-");
    Path keyStore = dir.resolve("engine.p12");
    Path certificate = dir.resolve("engine.crt");
    Path trustStore = dir.resolve("trust.p12");
    keytool(
        "-genkeypair",
        "-alias",
        "engine",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=127.0.0.1",
        "-ext",
        "SAN=ip:127.0.0.1",
        "-validity",
        "2",
        "-storetype",
        "PKCS12",
        "-keystore",
        keyStore.toString(),
        "-storepass",
        PASSWORD);
    keytool(
        "-exportcert",
        "-alias",
        "engine",
        "-keystore",
        keyStore.toString(),
        "-storepass",
        PASSWORD,
        "-file",
        certificate.toString());
    keytool(
        "-importcert",
        "-noprompt",
        "-alias",
        "engine",
        "-file",
        certificate.toString(),
        "-storetype",
        "PKCS12",
        "-keystore",
        trustStore.toString(),
        "-storepass",
        PASSWORD);
    return new SelfSignedCertificate(keyStore, trustStore);
  }

  /** The server's TLS context. */
  SSLContext serverContext() throws IOException, GeneralSecurityException {
    KeyStore store = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keyStore)) {
      store.load(in, PASSWORD.toCharArray());
    }
    KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keys.init(store, PASSWORD.toCharArray());
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(keys.getKeyManagers(), null, null);
    return context;
  }

  /**
   * JVM flags that make a client JVM trust the certificate (through the javax.net.ssl properties).
   */
  List<String> trustFlags() {
    return List.of(
        "-Djavax.net.ssl.trustStore=" + trustStore,
        "-Djavax.net.ssl.trustStorePassword=" + PASSWORD,
        "-Djavax.net.ssl.trustStoreType=PKCS12");
  }

  private static void keytool(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes());
    if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
      throw new IllegalStateException(
          "keytool failed: " + String.join(" ", command) + "\n" + output);
    }
  }
}
