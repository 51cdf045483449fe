package io.cobble.benchmarks.engine;

import java.nio.file.Path;
import java.util.SplittableRandom;
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

/**
 * db_bench {@code fillrandom} and {@code overwrite}: one invocation writes every one of the 1 M
 * keys once in random order, into an empty store (fill) or over a full one (overwrite).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms6g", "-Xmx6g", "-XX:+AlwaysPreTouch"})
@Warmup(iterations = 1)
@Measurement(iterations = 3)
public class FillBenchmark {
  static final int KEYS = 1_000_000;

  @Param({Stores.COBBLE, Stores.ROCKSDB})
  public String engine;

  private final byte[] key = new byte[Keys.KEY_SIZE];
  private byte[][] values;
  private int[] order;
  private Path dir;
  private KvStore store;

  @Setup(Level.Trial)
  public void prepareData() {
    SplittableRandom random = new SplittableRandom(42);
    values = new byte[1024][];
    for (int i = 0; i < values.length; i++) {
      values[i] = Keys.value(random);
    }
    order = Keys.shuffled(KEYS, 7);
  }

  @Setup(Level.Iteration)
  public void openStore() {
    dir = Stores.freshDir(engine);
    store = Stores.open(engine, dir);
  }

  @TearDown(Level.Iteration)
  public void closeStore() {
    store.close();
    Stores.delete(dir);
  }

  private void writeAll() {
    for (int i = 0; i < KEYS; i++) {
      store.put(Keys.encode(order[i], key), values[i & 1023]);
    }
  }

  @Benchmark
  @OperationsPerInvocation(KEYS)
  public void fillrandom() {
    writeAll();
  }

  /** The store is filled outside the timed region by {@link Overwrite#fill}. */
  @Benchmark
  @OperationsPerInvocation(KEYS)
  public void overwrite(Overwrite preloaded) {
    writeAll();
  }

  /** Fills the store before each timed overwrite pass. */
  @State(Scope.Thread)
  public static class Overwrite {
    @Setup(Level.Iteration)
    public void fill(FillBenchmark bench) {
      bench.writeAll();
      bench.store.settle();
    }
  }
}
