package io.cobble.benchmarks.flinkstate;

import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.MAP_KEYS;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.MAP_KEY_COUNT;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.MAP_VALUES;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.NEW_KEYS;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.NEW_KEY_COUNT;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.RANDOM_VALUES;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.RANDOM_VALUE_COUNT;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.SETUP_KEYS;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.SETUP_KEY_COUNT;

import java.io.File;
import java.nio.file.Files;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Shared set-up of the state benchmarks, after apache/flink-benchmarks' {@code StateBenchmarkBase}:
 * one thread, throughput in ops/ms, a fresh backend per trial. The defaults are a quick run (one
 * fork, 2 × 5 s warm-up, 3 × 5 s measured); the steady-state command is in benchmarks/README.md.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms3g", "-Xmx3g", "-XX:+AlwaysPreTouch", "-XX:+UseParallelGC"})
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 5)
public abstract class StateBenchmarkBase {
  /** Shared with {@link KeyValue}: each invocation takes the next key, as upstream does. */
  static AtomicInteger keyIndex = new AtomicInteger();

  @Param({"HEAP", "ROCKSDB", "COBBLE"})
  public String backendType;

  protected KeyedStateBackend<Long> keyedStateBackend;
  private BenchmarkBackend backend;

  protected KeyedStateBackend<Long> createKeyedStateBackend() throws Exception {
    // The shared keys and values (two million boxed longs, shuffled) are built when the class is
    // first used; without this, that happened in the first measured invocation and left the first
    // iteration after the set-up nearly empty.
    StateBenchmarkConstants.SETUP_KEYS.size();
    File parent =
        new File(System.getProperty("bench.state.dir", System.getProperty("java.io.tmpdir")));
    Files.createDirectories(parent.toPath());
    backend = BenchmarkBackend.create(backendType, parent);
    return backend.backend();
  }

  /**
   * Prints the Cobble shard's gauges after each iteration (fork output), to explain a drift, then
   * runs the shape's own per-iteration clean-up: the gauges must show what the iteration left
   * behind, not the cleared state.
   */
  @TearDown(Level.Iteration)
  public void afterIteration() throws Exception {
    String state = backend == null ? null : backend.engineState();
    if (state != null) {
      System.out.println();
      System.out.println("[cobble] " + state);
    }
    cleanUpIteration();
  }

  /** The shape's clean-up after each iteration, outside the measured window. */
  protected void cleanUpIteration() throws Exception {}

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    if (backend != null) {
      backend.close();
    }
  }

  private static int nextIndex() {
    return keyIndex.getAndIncrement() & Integer.MAX_VALUE;
  }

  /** The keys and values of one invocation. */
  @State(Scope.Thread)
  public static class KeyValue {
    long setUpKey;
    long newKey;
    long mapKey;
    double mapValue;
    long value;
    List<Long> listValue;

    @Setup(Level.Invocation)
    public void kvSetup() {
      int index = nextIndex();
      setUpKey = SETUP_KEYS.get(index % SETUP_KEY_COUNT);
      newKey = NEW_KEYS.get(index % NEW_KEY_COUNT);
      mapKey = MAP_KEYS.get(index % MAP_KEY_COUNT);
      mapValue = MAP_VALUES.get(index % MAP_KEY_COUNT);
      value = RANDOM_VALUES.get(index % RANDOM_VALUE_COUNT);
      listValue = Collections.singletonList(RANDOM_VALUES.get(index % RANDOM_VALUE_COUNT));
    }
  }
}
