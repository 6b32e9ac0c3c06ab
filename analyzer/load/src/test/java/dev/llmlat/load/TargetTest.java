package dev.llmlat.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import org.junit.jupiter.api.Test;

class TargetTest {
  @Test
  void aServerRootGetsTheApisPath() {
    assertThat(Target.parse("http://127.0.0.1:8000", null).url())
        .hasToString("http://127.0.0.1:8000/v1/chat/completions");
    assertThat(Target.parse("http://127.0.0.1:8000/", Endpoint.COMPLETIONS).url())
        .hasToString("http://127.0.0.1:8000/v1/completions");
    assertThat(Target.parse("https://gw.example/v1", null).url())
        .hasToString("https://gw.example/v1/chat/completions");
    assertThat(Target.parse("https://gw.example/v1", null).port()).isEqualTo(443);
  }

  @Test
  void anEndpointUrlNamesItsApi() {
    Target chat = Target.parse("http://h:9/openai/v1/chat/completions", null);
    assertThat(chat.endpoint()).isEqualTo(Endpoint.CHAT);
    assertThat(chat.modelsUrl()).hasToString("http://h:9/openai/v1/models");
    Target legacy = Target.parse("http://h:9/v1/completions", null);
    assertThat(legacy.endpoint()).isEqualTo(Endpoint.COMPLETIONS);
    assertThat(legacy.modelsUrl()).hasToString("http://h:9/v1/models");
  }

  @Test
  void badUrlsAreRefusedNamingThem() {
    assertThatThrownBy(() -> Target.parse("localhost:8000", null))
        .hasMessageContaining("'localhost:8000' must start with http://");
    assertThatThrownBy(() -> Target.parse("http://h/v1/completions", Endpoint.CHAT))
        .hasMessageContaining(
            "is the /v1/completions API but --endpoint asks for /v1/chat/completions");
    assertThatThrownBy(() -> Target.parse("http://user:secret@h/v1", null))
        .hasMessageContaining("carries credentials")
        .hasMessageNotContaining("secret");
    assertThatThrownBy(() -> Target.parse("http:// bad", null))
        .hasMessageContaining("is not a URL");
  }

  @Test
  void aPortOutsideItsRangeOrAMissingHostIsRefusedBeforeAnyRequest() {
    // the JDK's client accepts these URIs and fails each request while sending
    assertThatThrownBy(() -> Target.parse("http://127.0.0.1:99999", null))
        .hasMessage("URL 'http://127.0.0.1:99999' has port 99999, outside 1-65535");
    assertThatThrownBy(() -> Target.parse("http://127.0.0.1:0/v1", null))
        .hasMessage("URL 'http://127.0.0.1:0/v1' has port 0, outside 1-65535");
    assertThatThrownBy(() -> Target.parse("http://h:99999999999", null))
        .hasMessage("URL 'http://h:99999999999' has port 99999999999, outside 1-65535");
    assertThatThrownBy(() -> Target.parse("http://h:eighty", null))
        .hasMessage("URL 'http://h:eighty' has port 'eighty', not a number");
    assertThatThrownBy(() -> Target.parse("http://bad_host:8000", null))
        .hasMessage("URL 'http://bad_host:8000' has host 'bad_host', not a valid host name");
    assertThatThrownBy(() -> Target.parse("http://:8000", null))
        .hasMessage("URL 'http://:8000' names no host");
    assertThatThrownBy(() -> Target.parse("http:/v1", null))
        .hasMessage("URL 'http:/v1' names no host");
    assertThatThrownBy(() -> Target.parse("ftp://h/v1", null))
        .hasMessage("URL 'ftp://h/v1' must start with http:// or https://");
    assertThatThrownBy(() -> Target.parse("http://user:secret@bad_host:1", null))
        .hasMessage("URL 'http://bad_host:1' has host 'bad_host', not a valid host name");
    // a target built without parse is held to the same rules
    assertThatThrownBy(
            () -> new Target(URI.create("http://h:70000/v1/chat/completions"), Endpoint.CHAT))
        .hasMessageContaining("has port 70000");
    assertThat(Target.parse("http://h:65535", null).port()).isEqualTo(65535);
    assertThat(Target.parse("http://[::1]:1/v1", null).port()).isEqualTo(1);
  }
}
