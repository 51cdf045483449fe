package io.cobble.flink.state;

import io.cobble.util.ValueSink;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalValueState;

/** {@code ValueState}: one row per (key, namespace) holding the serialized value. */
final class CobbleValueState<K, N, V> extends AbstractCobbleState<K, N, V>
    implements InternalValueState<K, N, V> {

  private final V defaultValue;
  // The value readColumn handed over, deserialized in place (no copy of its bytes per get).
  private V readValue;
  private final ValueSink reader =
      (buf, off, len) -> readValue = deserialize(valueSerializer, buf, off, len);

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
    if (!db.readColumn(bucket(), family, rowKey(), 0, reader)) {
      return defaultValue == null ? null : valueSerializer.copy(defaultValue);
    }
    V value = readValue;
    readValue = null;
    return value;
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
