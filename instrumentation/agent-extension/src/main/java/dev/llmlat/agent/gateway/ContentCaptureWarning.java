package dev.llmlat.agent.gateway;

import dev.llmlat.agent.gateway.internal.ContentCapture;
import io.opentelemetry.javaagent.extension.AgentListener;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Says loudly, once at agent start, that prompts and completions will be stored (opt-in only). */
public final class ContentCaptureWarning implements AgentListener {
  private static final Logger logger = Logger.getLogger(ContentCaptureWarning.class.getName());

  @Override
  public void afterAgent(AutoConfiguredOpenTelemetrySdk sdk) {
    String warning = message();
    if (warning != null) {
      logger.log(Level.WARNING, warning);
    }
  }

  /** The warning, or null when content capture is off (the default). */
  static String message() {
    if (!ContentCapture.enabled()) {
      return null;
    }
    return "llmlat: "
        + ContentCapture.PROPERTY
        + "=true: PROMPTS AND COMPLETIONS WILL BE STORED in gateway spans"
        + " (gen_ai.input.messages, gen_ai.output.messages; up to "
        + ContentCapture.maxLength()
        + " characters each) and exported to wherever the spans go. They may hold personal or confidential data;"
        + " unset it to stop.";
  }
}
