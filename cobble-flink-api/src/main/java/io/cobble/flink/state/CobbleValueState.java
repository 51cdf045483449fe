package io.cobble.flink.state;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalValueState;

/** {@code ValueState}: one row per (key, namespace) holding the serialized value. */
final class CobbleValueState<K, N, V> extends AbstractCobbleState<K, N, V>
    implements InternalValueState<K, N, V> {

  private final V defaultValue;

  CobbleValueState(
      CobbleKeyedStateCore<K> core,
      String family,
      TypeSerializer<N> namespaceSerializer,
      TypeSerializer<V> valueSerializer,
      V defaultValue) {
    super(core, family, namespaceSerializer, valueSerializer);
    this.defaultValue = defaultValue;
  }

  @Override
  public V value() {
    byte[] raw = read(rowKey());
    if (raw == null) {
      return defaultValue == null ? null : valueSerializer.copy(defaultValue);
    }
    return deserialize(valueSerializer, raw);
  }

  @Override
  public void update(V value) {
    if (value == null) {
      clear();
      return;
    }
    db.put(bucket(), family, rowKey(), 0, serialize(valueSerializer, value));
  }
}
