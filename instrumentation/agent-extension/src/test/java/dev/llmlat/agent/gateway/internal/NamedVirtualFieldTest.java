package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link NamedVirtualField} without the agent (the instrumentation API's fallback, a weak map by
 * identity): values by owner instance, nothing for other objects, nothing for an owner that is not
 * there.
 */
class NamedVirtualFieldTest {

  @Test
  void holdsAValuePerInstanceOfTheOwnerUntilTaken() {
    NamedVirtualField<String> field =
        NamedVirtualField.find("java.util.ArrayList", null, String.class);
    assertThat(field).isNotNull();
    List<String> one = new ArrayList<>(List.of("equal"));
    List<String> other = new ArrayList<>(List.of("equal")); // equal, not the same object
    field.set(one, "first");
    field.set(other, "second");
    assertThat(field.get(one)).isEqualTo("first");
    assertThat(field.take(other)).isEqualTo("second");
    assertThat(field.get(other)).as("taken").isNull();
    assertThat(field.take(other)).isNull();
    assertThat(field.get(one)).isEqualTo("first");
  }

  @Test
  void anObjectOfAnotherClassHasNoValueAndTakesNone() {
    NamedVirtualField<String> field =
        NamedVirtualField.find("java.util.ArrayList", null, String.class);
    Object notAnOwner = new ArrayDeque<String>();
    field.set(notAnOwner, "ignored");
    assertThat(field.get(notAnOwner)).isNull();
    assertThat(field.get(null)).isNull();
    assertThat(field.take(null)).isNull();
  }

  @Test
  void anOwnerThatIsNotThereHasNoField() {
    assertThat(
            NamedVirtualField.find(
                "io.vertx.core.Completable", getClass().getClassLoader(), String.class))
        .as("Vert.x 5's, absent beside Vert.x 4.5")
        .isNull();
  }
}
