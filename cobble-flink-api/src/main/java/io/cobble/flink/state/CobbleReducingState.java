package io.cobble.flink.state;

import java.util.Collection;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalReducingState;

/** {@code ReducingState}: one row per (key, namespace) holding the reduced value. */
final class CobbleReducingState<K, N, V> extends AbstractCobbleState<K, N, V>
    implements InternalReducingState<K, N, V> {

  private final ReduceFunction<V> reduceFunction;

  CobbleReducingState(
      CobbleKeyedStateCore<K> core,
      String family,
      TypeSerializer<N> namespaceSerializer,
      TypeSerializer<V> valueSerializer,
      ReduceFunction<V> reduceFunction) {
    super(core, family, namespaceSerializer, valueSerializer);
    this.reduceFunction = reduceFunction;
  }

  @Override
  public V get() {
    return getInternal();
  }

  @Override
  public void add(V value) throws Exception {
    if (value == null) {
      clear();
      return;
    }
    byte[] key = rowKey();
    byte[] raw = read(key);
    V next = raw == null ? value : reduceFunction.reduce(deserialize(valueSerializer, raw), value);
    db.put(bucket(), family, key, 0, serialize(valueSerializer, next));
  }

  @Override
  public V getInternal() {
    byte[] raw = read(rowKey());
    return raw == null ? null : deserialize(valueSerializer, raw);
  }

  @Override
  public void updateInternal(V value) {
    if (value == null) {
      clear();
      return;
    }
    db.put(bucket(), family, rowKey(), 0, serialize(valueSerializer, value));
  }

  @Override
  public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
    if (sources == null || sources.isEmpty()) {
      return;
    }
    V merged = null;
    for (N source : sources) {
      if (source == null) {
        continue;
      }
      byte[] key = rowKey(source);
      byte[] raw = read(key);
      if (raw != null) {
        db.deleteRow(bucket(), family, key);
        V v = deserialize(valueSerializer, raw);
        merged = merged == null ? v : reduceFunction.reduce(merged, v);
      }
    }
    if (merged != null) {
      byte[] key = rowKey(target);
      byte[] raw = read(key);
      V result =
          raw == null ? merged : reduceFunction.reduce(deserialize(valueSerializer, raw), merged);
      db.put(bucket(), family, key, 0, serialize(valueSerializer, result));
    }
  }
}
