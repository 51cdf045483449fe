package io.cobble.flink.state;

import java.util.Collection;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;

/** {@code AggregatingState}: one row per (key, namespace) holding the accumulator. */
final class CobbleAggregatingState<K, N, IN, ACC, OUT> extends AbstractCobbleState<K, N, ACC>
    implements InternalAggregatingState<K, N, IN, ACC, OUT> {

  private final AggregateFunction<IN, ACC, OUT> aggregateFunction;

  CobbleAggregatingState(
      CobbleKeyedStateCore<K> core,
      String family,
      TypeSerializer<N> namespaceSerializer,
      TypeSerializer<ACC> accumulatorSerializer,
      AggregateFunction<IN, ACC, OUT> aggregateFunction) {
    super(core, family, namespaceSerializer, accumulatorSerializer);
    this.aggregateFunction = aggregateFunction;
  }

  @Override
  public OUT get() {
    ACC acc = getInternal();
    return acc == null ? null : aggregateFunction.getResult(acc);
  }

  @Override
  public void add(IN value) {
    if (value == null) {
      clear();
      return;
    }
    byte[] key = rowKey();
    byte[] raw = read(key);
    ACC acc =
        raw == null ? aggregateFunction.createAccumulator() : deserialize(valueSerializer, raw);
    acc = aggregateFunction.add(value, acc);
    db.put(bucket(), family, key, 0, serialize(valueSerializer, acc));
  }

  @Override
  public ACC getInternal() {
    byte[] raw = read(rowKey());
    return raw == null ? null : deserialize(valueSerializer, raw);
  }

  @Override
  public void updateInternal(ACC acc) {
    if (acc == null) {
      clear();
      return;
    }
    db.put(bucket(), family, rowKey(), 0, serialize(valueSerializer, acc));
  }

  @Override
  public void mergeNamespaces(N target, Collection<N> sources) {
    if (sources == null || sources.isEmpty()) {
      return;
    }
    ACC merged = null;
    for (N source : sources) {
      if (source == null) {
        continue;
      }
      byte[] key = rowKey(source);
      byte[] raw = read(key);
      if (raw != null) {
        db.deleteRow(bucket(), family, key);
        ACC acc = deserialize(valueSerializer, raw);
        merged = merged == null ? acc : aggregateFunction.merge(merged, acc);
      }
    }
    if (merged != null) {
      byte[] key = rowKey(target);
      byte[] raw = read(key);
      ACC result =
          raw == null ? merged : aggregateFunction.merge(deserialize(valueSerializer, raw), merged);
      db.put(bucket(), family, key, 0, serialize(valueSerializer, result));
    }
  }
}
