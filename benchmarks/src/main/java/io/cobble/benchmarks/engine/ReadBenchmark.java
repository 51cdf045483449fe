package io.cobble.benchmarks.engine;

import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
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
 * db_bench read shapes over {@link Keys#count()} keys (1 M unless the 10 M profile is on) written
 * in random order and settled into files: {@code readrandom} (hits), {@code readmissing}, {@code
 * seekrandom} with a 10-row scan, and {@code readwhilewriting} (one reader, one writer overwriting
 * at full speed).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms6g", "-Xmx6g", "-XX:+AlwaysPreTouch"})
// At least 60 s measured per engine, so the result is the steady state (the heap has grown and the
// block cache is full); run with -prof gc for bytes/op.
@Warmup(iterations = 2, time = 10)
@Measurement(iterations = 6, time = 10)
public class ReadBenchmark {
  static final int KEYS = Keys.count();

  @Param({Stores.COBBLE, Stores.ROCKSDB})
  public String engine;

  /** Extra Cobble config ({@code key=value;...}) for Cobble-only variants; empty by default. */
  @Param({""})
  public String cobbleOptions;

  private Path dir;
  private KvStore store;
  private byte[][] values;

  @Setup(Level.Trial)
  public void load() {
    SplittableRandom random = new SplittableRandom(42);
    values = new byte[1024][];
    for (int i = 0; i < values.length; i++) {
      values[i] = Keys.value(random);
    }
    dir = Stores.freshDir(engine);
    store = Stores.open(engine, dir, cobbleOptions);
    int[] order = Keys.shuffled(KEYS, 7);
    byte[] key = new byte[Keys.KEY_SIZE];
    for (int i = 0; i < KEYS; i++) {
      store.put(Keys.encode(order[i], key), values[i & 1023]);
    }
    store.settle();
  }

  @TearDown(Level.Trial)
  public void close() {
    store.close();
    Stores.delete(dir);
  }

  /** Per-thread key buffer, so a read allocates nothing on the benchmark side. */
  @State(Scope.Thread)
  public static class KeyBuffer {
    final byte[] key = new byte[Keys.KEY_SIZE];

    byte[] hit() {
      return Keys.encode(ThreadLocalRandom.current().nextInt(KEYS), key);
    }

    byte[] miss() {
      return Keys.encodeMissing(ThreadLocalRandom.current().nextInt(KEYS), key);
    }
  }

  @Benchmark
  public byte[] readrandom(KeyBuffer keys) {
    byte[] value = store.get(keys.hit());
    if (value == null) {
      throw new IllegalStateException("written key not found");
    }
    return value;
  }

  @Benchmark
  public byte[] readmissing(KeyBuffer keys) {
    byte[] value = store.get(keys.miss());
    if (value != null) {
      throw new IllegalStateException("missing key found");
    }
    return value;
  }

  @Benchmark
  public long seekrandom(KeyBuffer keys) {
    return store.scan(keys.hit(), 10);
  }

  @Benchmark
  @Group("readwhilewriting")
  @GroupThreads(1)
  public byte[] reader(KeyBuffer keys) {
    return store.get(keys.hit());
  }

  @Benchmark
  @Group("readwhilewriting")
  @GroupThreads(1)
  public void writer(KeyBuffer keys) {
    store.put(keys.hit(), values[ThreadLocalRandom.current().nextInt(1024)]);
  }
}
