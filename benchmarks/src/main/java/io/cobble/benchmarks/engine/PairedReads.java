package io.cobble.benchmarks.engine;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code readrandom} or {@code readwhilewriting} (the reader, next to one writer overwriting at
 * full speed) for both engines in one JVM, alternating short slices (Cobble, RocksDB, RocksDB,
 * Cobble, ...), so load from other processes hits both engines alike. Each pair of slices gives one
 * ratio; the median and quartiles of those ratios are the result, both for wall-clock reads per
 * second and for reads per CPU second of the reading thread (user + system time, which includes the
 * read syscalls and RocksDB's JNI work but not time spent descheduled). Complements the JMH {@link
 * ReadBenchmark} on a shared, noisy machine, where JMH runs one engine after the other.
 *
 * <p>Run: {@code java -Xms6g -Xmx6g -cp benchmarks.jar io.cobble.benchmarks.engine.PairedReads
 * [readrandom|readwhilewriting] [pairs] [sliceMillis]} (defaults readrandom, 40 and 1000; keys from
 * {@code -Dcobble.bench.keys}).
 */
public final class PairedReads {
  private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

  private PairedReads() {}

  public static void main(String[] args) {
    String shape = args.length > 0 ? args[0] : "readrandom";
    if (!shape.equals("readrandom") && !shape.equals("readwhilewriting")) {
      throw new IllegalArgumentException(
          "unknown shape '" + shape + "': use readrandom or readwhilewriting");
    }
    boolean writing = shape.equals("readwhilewriting");
    int pairs = args.length > 1 ? Integer.parseInt(args[1]) : 40;
    long sliceNanos = (args.length > 2 ? Long.parseLong(args[2]) : 1000) * 1_000_000L;
    int keys = Keys.count();
    byte[][] values = values();
    Path cobbleDir = Stores.freshDir(Stores.COBBLE);
    Path rocksDir = Stores.freshDir(Stores.ROCKSDB);
    try (KvStore cobble = load(Stores.COBBLE, cobbleDir, keys, values);
        KvStore rocks = load(Stores.ROCKSDB, rocksDir, keys, values)) {
      for (int i = 0; i < 5; i++) {
        slice(cobble, keys, values, writing, sliceNanos);
        slice(rocks, keys, values, writing, sliceNanos);
      }
      double[] ratios = new double[pairs];
      double[] cpuRatios = new double[pairs];
      double[] writeRatios = new double[pairs];
      double[] sums = new double[4];
      for (int i = 0; i < pairs; i++) {
        double[] c;
        double[] r;
        if ((i & 1) == 0) {
          c = slice(cobble, keys, values, writing, sliceNanos);
          r = slice(rocks, keys, values, writing, sliceNanos);
        } else {
          r = slice(rocks, keys, values, writing, sliceNanos);
          c = slice(cobble, keys, values, writing, sliceNanos);
        }
        sums[0] += c[0];
        sums[1] += r[0];
        sums[2] += c[2];
        sums[3] += r[2];
        ratios[i] = c[0] / r[0];
        cpuRatios[i] = c[1] / r[1];
        writeRatios[i] = writing ? c[2] / r[2] : 0;
        System.out.printf(
            "pair %2d: cobble %,10.0f reads/s %,10.0f reads/cpu-s %,10.0f writes/s  rocksdb %,10.0f"
                + " reads/s %,10.0f reads/cpu-s %,10.0f writes/s%n",
            i, c[0], c[1], c[2], r[0], r[1], r[2]);
      }
      System.out.printf(
          "%s %,d keys, %d pairs of %d ms: cobble %,.0f reads/s, rocksdb %,.0f reads/s;"
              + " read ratio %s; per reader cpu second %s%n",
          shape,
          keys,
          pairs,
          sliceNanos / 1_000_000,
          sums[0] / pairs,
          sums[1] / pairs,
          summary(ratios),
          summary(cpuRatios));
      if (writing) {
        System.out.printf(
            "writer: cobble %,.0f writes/s, rocksdb %,.0f writes/s; ratio %s%n",
            sums[2] / pairs, sums[3] / pairs, summary(writeRatios));
      }
    } finally {
      Stores.delete(cobbleDir);
      Stores.delete(rocksDir);
    }
  }

  private static byte[][] values() {
    SplittableRandom random = new SplittableRandom(42);
    byte[][] values = new byte[1024][];
    for (int i = 0; i < values.length; i++) {
      values[i] = Keys.value(random);
    }
    return values;
  }

  private static KvStore load(String engine, Path dir, int keys, byte[][] values) {
    KvStore store = Stores.open(engine, dir);
    int[] order = Keys.shuffled(keys, 7);
    byte[] key = new byte[Keys.KEY_SIZE];
    for (int i = 0; i < keys; i++) {
      store.put(Keys.encode(order[i], key), values[i & 1023]);
    }
    store.settle();
    return store;
  }

  private static String summary(double[] ratios) {
    double[] r = ratios.clone();
    Arrays.sort(r);
    int n = r.length;
    return String.format(
        "median %.3f (quartiles %.3f-%.3f, min %.3f, max %.3f)",
        r[n / 2], r[n / 4], r[(3 * n) / 4], r[0], r[n - 1]);
  }

  /**
   * Runs gets of random stored keys for {@code nanos}, with a writer overwriting random keys
   * alongside when {@code writing}; returns reads per wall-clock second, reads per CPU second of
   * the reading thread, and writes per second.
   */
  private static double[] slice(
      KvStore store, int keys, byte[][] values, boolean writing, long nanos) {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong writes = new AtomicLong();
    Thread writer = null;
    if (writing) {
      writer =
          new Thread(
              () -> {
                byte[] key = new byte[Keys.KEY_SIZE];
                ThreadLocalRandom random = ThreadLocalRandom.current();
                long n = 0;
                while (!stop.get()) {
                  store.put(Keys.encode(random.nextInt(keys), key), values[random.nextInt(1024)]);
                  n++;
                }
                writes.set(n);
              });
      writer.start();
    }
    byte[] key = new byte[Keys.KEY_SIZE];
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long cpuStart = CPU.getCurrentThreadCpuTime();
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
    long cpu = CPU.getCurrentThreadCpuTime() - cpuStart;
    if (writer != null) {
      stop.set(true);
      try {
        writer.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    double seconds = (now - start) / 1e9;
    return new double[] {ops / seconds, ops * 1e9 / cpu, writes.get() / seconds};
  }
}
