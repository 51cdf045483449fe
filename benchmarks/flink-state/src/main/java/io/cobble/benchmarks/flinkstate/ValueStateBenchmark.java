package io.cobble.benchmarks.flinkstate;

import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.SETUP_KEY_COUNT;

import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.state.benchmark.StateBackendBenchmarkUtils;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;

/** ValueState: update of a pre-loaded key, insert of a new key, read. */
public class ValueStateBenchmark extends StateBenchmarkBase {
  private ValueState<Long> valueState;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    keyedStateBackend = createKeyedStateBackend();
    valueState =
        StateBackendBenchmarkUtils.getValueState(
            keyedStateBackend, new ValueStateDescriptor<>("kvState", Long.class));
    Random random = new Random(1);
    for (int i = 0; i < SETUP_KEY_COUNT; i++) {
      keyedStateBackend.setCurrentKey((long) i);
      valueState.update(random.nextLong());
    }
    keyIndex = new AtomicInteger();
  }

  @Benchmark
  public void valueUpdate(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    valueState.update(keyValue.value);
  }

  @Benchmark
  public void valueAdd(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.newKey);
    valueState.update(keyValue.value);
  }

  @Benchmark
  public Long valueGet(KeyValue keyValue) throws Exception {
    keyedStateBackend.setCurrentKey(keyValue.setUpKey);
    return valueState.value();
  }
}
