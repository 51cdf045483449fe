package io.cobble.benchmarks.flinkstate;

import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.LIST_VALUE_COUNT;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.SETUP_KEY_COUNT;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.state.benchmark.StateBackendBenchmarkUtils;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * ListState, re-loaded every iteration as upstream does (one value per pre-loaded key; RocksDB
 * compacted to one file so that reads do not depend on how keys spread over files).
 */
public class ListStateBenchmark extends StateBenchmarkBase {
  private final ListStateDescriptor<Long> descriptor =
      new ListStateDescriptor<>("listState", Long.class);
  private ListState<Long> listState;
  private List<Long> dummyLists;
  // CPU per thread group over the measured part of each iteration (set-up and tear-down excluded).
  private final ThreadCpu cpu = new ThreadCpu();
  private long[] countersAtMark;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    keyedStateBackend = createKeyedStateBackend();
    listState = StateBackendBenchmarkUtils.getListState(keyedStateBackend, descriptor);
    Random random = new Random(2);
    dummyLists = new ArrayList<>(LIST_VALUE_COUNT);
    for (int i = 0; i < LIST_VALUE_COUNT; i++) {
      dummyLists.add(random.nextLong());
    }
    keyIndex = new AtomicInteger();
  }

  @Setup(Level.Iteration)
  public void setUpPerIteration() throws Exception {
    Random random = new Random(3);
    for (int i = 0; i < SETUP_KEY_COUNT; i++) {
      keyedStateBackend.setCurrentKey((long) i);
      listState.add(random.nextLong());
    }
    BenchmarkBackend.compactIfLsm(keyedStateBackend, descriptor);
    cpu.mark();
    countersAtMark = BenchmarkBackend.engineCounters(keyedStateBackend);
  }

  @Override
  protected void cleanUpIteration() throws Exception {
    System.out.println();
    System.out.println("[cpu] " + cpu.sinceMark() + engineCountersSinceMark());
    StateBackendBenchmarkUtils.applyToAllKeys(
        keyedStateBackend,
        descriptor,
        (key, state) -> {
          keyedStateBackend.setCurrentKey(key);
          state.clear();
        });
    if (!BenchmarkBackend.compactIfLsm(keyedStateBackend, descriptor)) {
      System.gc();
    }
  }

  /** The Cobble shard's counters since the mark, e.g. " compactionBytesOut=1234"; else "". */
  private String engineCountersSinceMark() throws Exception {
    long[] now = BenchmarkBackend.engineCounters(keyedStateBackend);
    if (now == null || countersAtMark == null) {
      return "";
    }
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < now.length; i++) {
      text.append(' ')
          .append(BenchmarkBackend.ENGINE_COUNTERS[i])
          .append('=')
          .append(now[i] - countersAtMark[i]);
    }
    return text.toString();
  }

  @Benchmark
  public void listUpdate(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    listState.update(keyValue.listValue);
  }

  @Benchmark
  public void listAdd(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.newKey);
    listState.update(keyValue.listValue);
  }

  @Benchmark
  public void listAppend(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    listState.add(keyValue.value);
  }

  @Benchmark
  public Iterable<Long> listGet(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    return listState.get();
  }

  @Benchmark
  public void listGetAndIterate(KeyValue keyValue, Blackhole bh) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    for (Long value : listState.get()) {
      bh.consume(value);
    }
  }

  @Benchmark
  public void listAddAll(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    listState.addAll(dummyLists);
  }
}
