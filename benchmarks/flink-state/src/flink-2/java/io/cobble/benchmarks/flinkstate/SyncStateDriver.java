package io.cobble.benchmarks.flinkstate;

import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.state.benchmark.StateBackendBenchmarkUtils;

/** The shapes through a sync keyed backend, exactly as {@code ValueStateBenchmark} runs them. */
final class SyncStateDriver implements KeyedStateDriver {
  private final BenchmarkBackend backend;
  private final KeyedStateBackend<Long> keyed;
  private final ValueState<Long> value;
  private final MapState<Long, Double> map;
  private Object lastRead;

  SyncStateDriver(BenchmarkBackend backend) throws Exception {
    this.backend = backend;
    this.keyed = backend.backend();
    this.value =
        StateBackendBenchmarkUtils.getValueState(
            keyed, new ValueStateDescriptor<>("kvState", Long.class));
    this.map =
        StateBackendBenchmarkUtils.getMapState(
            keyed, new MapStateDescriptor<>("mapState", Long.class, Double.class));
  }

  @Override
  public void valueUpdate(Long key, Long v) {
    keyed.setCurrentKey(key);
    try {
      value.update(v);
    } catch (Exception e) {
      throw new IllegalStateException("valueUpdate of key " + key + " failed", e);
    }
  }

  @Override
  public void valueGet(Long key) {
    keyed.setCurrentKey(key);
    try {
      lastRead = value.value();
    } catch (Exception e) {
      throw new IllegalStateException("valueGet of key " + key + " failed", e);
    }
  }

  @Override
  public void mapUpdate(Long key, Long userKey, Double v) {
    keyed.setCurrentKey(key);
    try {
      map.put(userKey, v);
    } catch (Exception e) {
      throw new IllegalStateException("mapUpdate of key " + key + " failed", e);
    }
  }

  @Override
  public void mapGet(Long key, Long userKey) {
    keyed.setCurrentKey(key);
    try {
      lastRead = map.get(userKey);
    } catch (Exception e) {
      throw new IllegalStateException("mapGet of key " + key + " failed", e);
    }
  }

  @Override
  public void drain() {}

  @Override
  public Object lastRead() {
    return lastRead;
  }

  @Override
  public void close() throws Exception {
    backend.close();
  }
}
