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
 * db_bench {@code fillrandom} and {@code overwrite}: one invocation writes the next 1 M of the
 * {@link Keys#count()} keys in random order, into an empty store (fill) or over a full one
 * (overwrite). With the default 1 M keys that is every key once; the 10 M profile runs 10
 * invocations per iteration ({@code -bs 10}) to write them all.
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
  static final int KEYS = Keys.count();
  static final int CHUNK = 1_000_000;

  @Param({Stores.COBBLE, Stores.ROCKSDB})
  public String engine;

  /** Extra Cobble config ({@code key=value;...}) for Cobble-only variants; empty by default. */
  @Param({""})
  public String cobbleOptions;

  /**
   * For {@code compact}: whether the flushed inputs are dropped from the page cache first, so
   * compaction reads them from disk (where read-ahead and kernel hints matter).
   */
  @Param({"false"})
  public boolean coldInputs;

  private final byte[] key = new byte[Keys.KEY_SIZE];
  private byte[][] values;
  private int[] order;
  private Path dir;
  private KvStore store;
  private int written;

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
    store = Stores.open(engine, dir, cobbleOptions);
    written = 0;
  }

  @TearDown(Level.Iteration)
  public void closeStore() {
    store.close();
    Stores.delete(dir);
  }

  private void write(int from, int to) {
    for (int i = from; i < to; i++) {
      store.put(Keys.encode(order[i], key), values[i & 1023]);
    }
  }

  /** Writes the next chunk of the key order (wrapping around after the last key). */
  private void writeChunk() {
    int from = written % KEYS;
    int to = Math.min(KEYS, from + CHUNK);
    write(from, to);
    written += to - from;
  }

  @Benchmark
  @OperationsPerInvocation(CHUNK)
  public void fillrandom() {
    writeChunk();
  }

  /** The store is filled outside the timed region by {@link Overwrite#fill}. */
  @Benchmark
  @OperationsPerInvocation(CHUNK)
  public void overwrite(Overwrite preloaded) {
    writeChunk();
  }

  /**
   * Flushes and fully compacts a store that {@link Filled#fill} just wrote all keys into (time per
   * whole store): the compaction read path, where read-ahead and kernel hints act.
   */
  @Benchmark
  @OutputTimeUnit(TimeUnit.MILLISECONDS)
  public void compact(Filled filled) {
    store.settle();
  }

  /** Writes every key, unsettled (flushed and out of the page cache with coldInputs). */
  @State(Scope.Thread)
  public static class Filled {
    @Setup(Level.Iteration)
    public void fill(FillBenchmark bench) {
      bench.write(0, KEYS);
      if (bench.coldInputs) {
        bench.store.flush();
        PageCache.evict(bench.dir);
      }
    }
  }

  /** Fills the store before each timed overwrite pass. */
  @State(Scope.Thread)
  public static class Overwrite {
    @Setup(Level.Iteration)
    public void fill(FillBenchmark bench) {
      bench.write(0, KEYS);
      bench.store.settle();
    }
  }
}
