package io.cobble.benchmarks.flinkstate;

import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.MAP_KEYS;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.MAP_KEY_COUNT;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.MAP_VALUES;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.RANDOM_VALUES;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.RANDOM_VALUE_COUNT;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.SETUP_KEYS;
import static io.cobble.benchmarks.flinkstate.StateBenchmarkConstants.SETUP_KEY_COUNT;

import java.io.File;
import java.nio.file.Files;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Value and map get/update through Flink 2.0's async state API: Flink's ForSt backend and Cobble's
 * async backend, both driven by Flink's {@code AsyncExecutionController}, and Cobble's sync backend
 * running the same operations one by one. Data as in {@link ValueStateBenchmark} and {@link
 * MapStateBenchmark}: 500,000 pre-loaded keys, 10 user keys per map key. One invocation issues
 * {@value AsyncStateDriver#BUFFER_SIZE} operations (Flink's default async buffer size) on
 * consecutive keys of the shuffled key list and waits until all have completed; one op is one
 * completed state request. Only in the {@code -Pflink-2.0} jar.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms3g", "-Xmx3g", "-XX:+AlwaysPreTouch", "-XX:+UseParallelGC"})
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 5)
public class AsyncStateBenchmark {
  static final int BATCH = AsyncStateDriver.BUFFER_SIZE;

  @Param({"FORST", "COBBLE_ASYNC", "COBBLE_SYNC"})
  public String backendType;

  private KeyedStateDriver driver;
  private int next;

  @Setup(Level.Trial)
  public void setUp(BenchmarkParams params) throws Exception {
    SETUP_KEYS.size();
    File parent =
        new File(System.getProperty("bench.state.dir", System.getProperty("java.io.tmpdir")));
    Files.createDirectories(parent.toPath());
    driver = KeyedStateDriver.create(KeyedStateDriver.Type.valueOf(backendType), parent);
    // Load only the state the running shape reads or updates: the map is 5 M entries.
    if (params.getBenchmark().contains(".map")) {
      preloadMap(driver, SETUP_KEY_COUNT);
    } else {
      preloadValue(driver, SETUP_KEY_COUNT);
    }
    next = 0;
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    if (driver != null) {
      driver.close();
    }
  }

  /** Keys 0..keys-1, one random long each, issued and drained in batches. */
  static void preloadValue(KeyedStateDriver driver, int keys) {
    Random random = new Random(1);
    for (int i = 0; i < keys; i++) {
      driver.valueUpdate((long) i, random.nextLong());
      if (i % BATCH == BATCH - 1) {
        driver.drain();
      }
    }
    driver.drain();
  }

  /** Keys 0..keys-1, each with the 10 user keys and random doubles. */
  static void preloadMap(KeyedStateDriver driver, int keys) {
    Random random = new Random(4);
    for (int i = 0; i < keys; i++) {
      for (int j = 0; j < MAP_KEY_COUNT; j++) {
        driver.mapUpdate((long) i, MAP_KEYS.get(j), random.nextDouble());
      }
      if (i % (BATCH / MAP_KEY_COUNT) == BATCH / MAP_KEY_COUNT - 1) {
        driver.drain();
      }
    }
    driver.drain();
  }

  /** The first of this invocation's {@link #BATCH} consecutive key indexes. */
  private int nextBatch() {
    int first = next;
    next = (next + BATCH) % SETUP_KEY_COUNT;
    return first;
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void valueUpdate() {
    int first = nextBatch();
    for (int i = first; i < first + BATCH; i++) {
      driver.valueUpdate(SETUP_KEYS.get(i), RANDOM_VALUES.get(i % RANDOM_VALUE_COUNT));
    }
    driver.drain();
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public Object valueGet() {
    int first = nextBatch();
    for (int i = first; i < first + BATCH; i++) {
      driver.valueGet(SETUP_KEYS.get(i));
    }
    driver.drain();
    return driver.lastRead();
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void mapUpdate() {
    int first = nextBatch();
    for (int i = first; i < first + BATCH; i++) {
      driver.mapUpdate(
          SETUP_KEYS.get(i), MAP_KEYS.get(i % MAP_KEY_COUNT), MAP_VALUES.get(i % MAP_KEY_COUNT));
    }
    driver.drain();
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public Object mapGet() {
    int first = nextBatch();
    for (int i = first; i < first + BATCH; i++) {
      driver.mapGet(SETUP_KEYS.get(i), MAP_KEYS.get(i % MAP_KEY_COUNT));
    }
    driver.drain();
    return driver.lastRead();
  }
}
