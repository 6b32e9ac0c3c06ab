package dev.llmlat.agent.gateway.internal;

import io.opentelemetry.instrumentation.api.util.VirtualField;

/**
 * The agent's {@link VirtualField} on a library class this extension cannot name at compile time:
 * the JDK {@code HttpClient}'s internals ({@code jdk.internal.net.http}, outside what {@code
 * --release 17} compiles against) and Vert.x's classes (4.5's and 5's differ, and Vert.x is not on
 * the extension's class path). The agent keeps such a field by the owner's and the value's names,
 * registered by the instrumentation module ({@code registerVirtualFields}), so the owner is looked
 * up by name here, and an object that is not one of its instances has no value.
 *
 * @param <F> the value's type
 */
final class NamedVirtualField<F> {
  private final Class<?> owner;
  private final VirtualField<Object, F> field;

  private NamedVirtualField(Class<?> owner, VirtualField<Object, F> field) {
    this.owner = owner;
    this.field = field;
  }

  /**
   * The field of {@code valueType} on {@code owner}, loaded through {@code loader} (null: the
   * bootstrap loader); null when that class is not there.
   */
  @SuppressWarnings("unchecked")
  static <F> NamedVirtualField<F> find(String owner, ClassLoader loader, Class<F> valueType) {
    Class<Object> type;
    try {
      type = (Class<Object>) Class.forName(owner, false, loader);
    } catch (ClassNotFoundException | LinkageError e) {
      return null;
    }
    return new NamedVirtualField<>(type, VirtualField.find(type, valueType));
  }

  /** {@code object}'s value, null when it has none or is no instance of the owner. */
  F get(Object object) {
    return owner.isInstance(object) ? field.get(object) : null;
  }

  /** Sets {@code object}'s value (null clears it); nothing when it is no instance of the owner. */
  void set(Object object, F value) {
    if (owner.isInstance(object)) {
      field.set(object, value);
    }
  }

  /** {@code object}'s value, cleared. */
  F take(Object object) {
    F value = get(object);
    if (value != null) {
      field.set(object, null);
    }
    return value;
  }
}
