package io.cobble.benchmarks.flinkstate;

import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.MAP_KEYS;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.MAP_KEY_COUNT;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.SETUP_KEY_COUNT;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.state.benchmark.StateBackendBenchmarkUtils;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/** MapState with 10 user keys per pre-loaded key; iteration shapes count one op per entry. */
public class MapStateBenchmark extends StateBenchmarkBase {
  private MapState<Long, Double> mapState;
  private Map<Long, Double> dummyMaps;
  // CPU per thread group over the measured part of each iteration, as ListStateBenchmark prints it.
  private final ThreadCpu cpu = new ThreadCpu();

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    keyedStateBackend = createKeyedStateBackend();
    mapState =
        StateBackendBenchmarkUtils.getMapState(
            keyedStateBackend, new MapStateDescriptor<>("mapState", Long.class, Double.class));
    Random random = new Random(4);
    dummyMaps = new HashMap<>(MAP_KEY_COUNT);
    for (int i = 0; i < MAP_KEY_COUNT; i++) {
      dummyMaps.put(MAP_KEYS.get(i), random.nextDouble());
    }
    for (int i = 0; i < SETUP_KEY_COUNT; i++) {
      keyedStateBackend.setCurrentKey((long) i);
      for (int j = 0; j < MAP_KEY_COUNT; j++) {
        mapState.put(MAP_KEYS.get(j), random.nextDouble());
      }
    }
    keyIndex = new AtomicInteger();
  }

  @Setup(Level.Iteration)
  public void markCpu() {
    cpu.mark();
  }

  @Override
  protected void cleanUpIteration() {
    System.out.println();
    System.out.println("[cpu] " + cpu.sinceMark());
  }

  @Benchmark
  public void mapUpdate(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    mapState.put(keyValue.mapKey, keyValue.mapValue);
  }

  @Benchmark
  public void mapAdd(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.newKey);
    mapState.put(keyValue.mapKey, keyValue.mapValue);
  }

  @Benchmark
  public Double mapGet(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    return mapState.get(keyValue.mapKey);
  }

  @Benchmark
  public boolean mapContains(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    return mapState.contains(keyValue.mapKey << 1);
  }

  @Benchmark
  public boolean mapIsEmpty(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    return mapState.isEmpty();
  }

  @Benchmark
  @OperationsPerInvocation(MAP_KEY_COUNT)
  public void mapKeys(KeyValue keyValue, Blackhole bh) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    for (Long key : mapState.keys()) {
      bh.consume(key);
    }
  }

  @Benchmark
  @OperationsPerInvocation(MAP_KEY_COUNT)
  public void mapValues(KeyValue keyValue, Blackhole bh) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    for (Double value : mapState.values()) {
      bh.consume(value);
    }
  }

  @Benchmark
  @OperationsPerInvocation(MAP_KEY_COUNT)
  public void mapEntries(KeyValue keyValue, Blackhole bh) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    Iterable<Map.Entry<Long, Double>> entries = mapState.entries();
    if (entries != null) {
      for (Map.Entry<Long, Double> entry : entries) {
        bh.consume(entry.getKey());
        bh.consume(entry.getValue());
      }
    }
  }

  @Benchmark
  @OperationsPerInvocation(MAP_KEY_COUNT)
  public void mapIterator(KeyValue keyValue, Blackhole bh) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    Iterator<Map.Entry<Long, Double>> iterator = mapState.iterator();
    while (iterator.hasNext()) {
      Map.Entry<Long, Double> entry = iterator.next();
      bh.consume(entry.getKey());
      bh.consume(entry.getValue());
    }
  }

  /**
   * Not an upstream shape: one put into the key's map, then a pass over its entries, as a job that
   * updates a map and reads it whole for each event does. With writes and scans mixed, Cobble's
   * memtable is a skiplist, which every put and every scan searches.
   */
  @Benchmark
  @OperationsPerInvocation(MAP_KEY_COUNT)
  public void mapUpdateAndIterate(KeyValue keyValue, Blackhole bh) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    mapState.put(keyValue.mapKey, keyValue.mapValue);
    for (Map.Entry<Long, Double> entry : mapState.entries()) {
      bh.consume(entry.getKey());
      bh.consume(entry.getValue());
    }
  }

  @Benchmark
  public void mapRemove(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    mapState.remove(keyValue.mapKey);
  }

  @Benchmark
  public void mapPutAll(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    mapState.putAll(dummyMaps);
  }
}
