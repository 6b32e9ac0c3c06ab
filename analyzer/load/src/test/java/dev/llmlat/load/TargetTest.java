package dev.llmlat.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TargetTest {
  @Test
  void aServerRootGetsTheApisPath() {
    assertThat(Target.parse("http://127.0.0.1:8000", null).url()).hasToString("http://127.0.0.1:8000/v1/chat/completions");
    assertThat(Target.parse("http://127.0.0.1:8000/", Endpoint.COMPLETIONS).url()).hasToString("http://127.0.0.1:8000/v1/completions");
    assertThat(Target.parse("https://gw.example/v1", null).url()).hasToString("https://gw.example/v1/chat/completions");
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
    assertThatThrownBy(() -> Target.parse("localhost:8000", null)).hasMessageContaining("'localhost:8000' must start with http://");
    assertThatThrownBy(() -> Target.parse("http://h/v1/completions", Endpoint.CHAT))
        .hasMessageContaining("is the /v1/completions API but --endpoint asks for /v1/chat/completions");
    assertThatThrownBy(() -> Target.parse("http://user:secret@h/v1", null))
        .hasMessageContaining("carries credentials").hasMessageNotContaining("secret");
    assertThatThrownBy(() -> Target.parse("http:// bad", null)).hasMessageContaining("is not a URL");
  }
}
