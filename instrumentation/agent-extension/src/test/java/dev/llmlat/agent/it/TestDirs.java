package dev.llmlat.agent.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Where the tests find the agent and the extension jar, and keep their scratch files. */
public final class TestDirs {
  private TestDirs() {}

  public static Path agentJar() {
    return existing("llmlat.agent.jar", "target/agent/opentelemetry-javaagent.jar");
  }

  public static Path extensionJar() {
    return existing("llmlat.extension.jar", "target/llmlat-agent-extension-0.1.0-SNAPSHOT.jar");
  }

  /** Netty 4.2's jars, copied by the build for one gateway process. */
  public static Path netty42() {
    return copied("llmlat.netty42.dir", "target/gateway-libs/netty-4.2");
  }

  private static Path copied(String property, String fallback) {
    Path dir = Path.of(System.getProperty(property, fallback)).toAbsolutePath();
    if (!Files.isDirectory(dir)) {
      throw new IllegalStateException(dir + " is missing: run `mvn verify` (it copies the jars)");
    }
    return dir;
  }

  /**
   * Apache HttpClient 5.3's jars (and its core 5.2's), copied by the build for one gateway process.
   */
  public static Path httpclient53() {
    return copied("llmlat.httpclient53.dir", "target/gateway-libs/httpclient-5.3");
  }

  public static Path work() throws IOException {
    return Files.createDirectories(
        Path.of(System.getProperty("llmlat.work.dir", "target/it-work")).toAbsolutePath());
  }

  private static Path existing(String property, String fallback) {
    Path path = Path.of(System.getProperty(property, fallback)).toAbsolutePath();
    if (!Files.isRegularFile(path)) {
      throw new IllegalStateException(
          path + " is missing: run `mvn verify` (it packages the extension and copies the agent)");
    }
    return path;
  }
}
