package io.cobble.benchmarks.engine;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code readrandom} for both engines in one JVM, alternating short slices (Cobble, RocksDB,
 * RocksDB, Cobble, ...), so load from other processes hits both engines alike. Each pair of slices
 * gives one ratio; the median and quartiles of those ratios are the result. Complements the JMH
 * {@link ReadBenchmark} on a shared, noisy machine, where JMH runs one engine after the other.
 *
 * <p>Run: {@code java -Xms6g -Xmx6g -cp benchmarks.jar io.cobble.benchmarks.engine.PairedReadRandom
 * [pairs] [sliceMillis]} (defaults 40 and 1000; keys from {@code -Dcobble.bench.keys}).
 */
public final class PairedReadRandom {
  private PairedReadRandom() {}

  public static void main(String[] args) {
    int pairs = args.length > 0 ? Integer.parseInt(args[0]) : 40;
    long sliceNanos = (args.length > 1 ? Long.parseLong(args[1]) : 1000) * 1_000_000L;
    int keys = Keys.count();
    Path cobbleDir = Stores.freshDir(Stores.COBBLE);
    Path rocksDir = Stores.freshDir(Stores.ROCKSDB);
    try (KvStore cobble = load(Stores.COBBLE, cobbleDir, keys);
        KvStore rocks = load(Stores.ROCKSDB, rocksDir, keys)) {
      for (int i = 0; i < 5; i++) {
        slice(cobble, keys, sliceNanos);
        slice(rocks, keys, sliceNanos);
      }
      double[] ratios = new double[pairs];
      double cobbleSum = 0;
      double rocksSum = 0;
      for (int i = 0; i < pairs; i++) {
        double c;
        double r;
        if ((i & 1) == 0) {
          c = slice(cobble, keys, sliceNanos);
          r = slice(rocks, keys, sliceNanos);
        } else {
          r = slice(rocks, keys, sliceNanos);
          c = slice(cobble, keys, sliceNanos);
        }
        cobbleSum += c;
        rocksSum += r;
        ratios[i] = c / r;
        System.out.printf(
            "pair %2d: cobble %,10.0f ops/s  rocksdb %,10.0f ops/s  ratio %.3f%n",
            i, c, r, ratios[i]);
      }
      Arrays.sort(ratios);
      System.out.printf(
          "readrandom %,d keys, %d pairs of %d ms: cobble %,.0f ops/s, rocksdb %,.0f ops/s;"
              + " ratio median %.3f (quartiles %.3f-%.3f, min %.3f, max %.3f)%n",
          keys,
          pairs,
          sliceNanos / 1_000_000,
          cobbleSum / pairs,
          rocksSum / pairs,
          ratios[pairs / 2],
          ratios[pairs / 4],
          ratios[(3 * pairs) / 4],
          ratios[0],
          ratios[pairs - 1]);
    } finally {
      Stores.delete(cobbleDir);
      Stores.delete(rocksDir);
    }
  }

  private static KvStore load(String engine, Path dir, int keys) {
    SplittableRandom random = new SplittableRandom(42);
    byte[][] values = new byte[1024][];
    for (int i = 0; i < values.length; i++) {
      values[i] = Keys.value(random);
    }
    KvStore store = Stores.open(engine, dir);
    int[] order = Keys.shuffled(keys, 7);
    byte[] key = new byte[Keys.KEY_SIZE];
    for (int i = 0; i < keys; i++) {
      store.put(Keys.encode(order[i], key), values[i & 1023]);
    }
    store.settle();
    return store;
  }

  /** Runs gets of random stored keys for {@code nanos}; returns operations per second. */
  private static double slice(KvStore store, int keys, long nanos) {
    byte[] key = new byte[Keys.KEY_SIZE];
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long start = System.nanoTime();
    long end = start + nanos;
    long ops = 0;
    long now;
    do {
      for (int i = 0; i < 256; i++) {
        if (store.get(Keys.encode(random.nextInt(keys), key)) == null) {
          throw new IllegalStateException("written key not found");
        }
      }
      ops += 256;
      now = System.nanoTime();
    } while (now < end);
    return ops * 1e9 / (now - start);
  }
}
