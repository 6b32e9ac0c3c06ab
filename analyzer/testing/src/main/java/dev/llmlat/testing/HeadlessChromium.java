package dev.llmlat.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.imageio.ImageIO;

/**
 * A real headless Chromium rendering a self-contained page: the DOM it built, and the pixels it
 * drew (no network: the flags keep it from calling home).
 */
public final class HeadlessChromium {
  private final String binary;
  private final List<String> flags;

  private HeadlessChromium(String binary, Path profile) {
    this.binary = binary;
    this.flags =
        List.of(
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--user-data-dir=" + profile);
  }

  /**
   * The browser, with its profile in {@code profile}; where there is none, the test skips or fails
   * as {@link RequiredTools} says.
   */
  public static HeadlessChromium require(Path profile) {
    String binary =
        Stream.of("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
            .filter(p -> Files.isExecutable(Path.of(p)))
            .findFirst()
            .orElse(null);
    RequiredTools.require(
        binary != null, "no Chromium here (scripts/test installs Debian's chromium)");
    return new HeadlessChromium(binary, profile);
  }

  /** The DOM after the page loaded. */
  public String dom(Path page) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(binary));
    cmd.addAll(flags);
    cmd.addAll(List.of("--dump-dom", page.toUri().toString()));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String dom = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return dom;
  }

  /** How many pixels (every other one in each direction) of each colour the rendered page has. */
  public Map<Integer, Integer> colours(Path page, Path png, int width, int height)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(binary));
    cmd.addAll(flags);
    cmd.addAll(
        List.of(
            "--window-size=" + width + "," + height,
            "--screenshot=" + png,
            page.toUri().toString()));
    Process q =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    assertThat(q.waitFor(60, TimeUnit.SECONDS)).isTrue();
    BufferedImage image = ImageIO.read(png.toFile());
    Map<Integer, Integer> colours = new HashMap<>();
    for (int y = 0; y < image.getHeight(); y += 2) {
      for (int x = 0; x < image.getWidth(); x += 2) {
        colours.merge(image.getRGB(x, y) & 0xFFFFFF, 1, Integer::sum);
      }
    }
    return colours;
  }
}
