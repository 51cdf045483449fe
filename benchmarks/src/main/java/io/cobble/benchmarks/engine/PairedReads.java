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
 * ratio, both for wall-clock reads per second and for reads per CPU second of the reading thread
 * (user + system time, which includes the read syscalls and RocksDB's JNI work but not time spent
 * descheduled). Complements the JMH {@link ReadBenchmark} on a shared, noisy machine, where JMH
 * runs one engine after the other.
 *
 * <p>The result is the steady state: at least {@link #MIN_MEASURED_MILLIS} of measured slices per
 * engine, the median and quartiles over the last 75 % of the pairs (the first quarter covers JIT,
 * cache warm-up and the heap's growth), and beside them the worst window of {@link #WINDOW}
 * consecutive pairs over the whole run (the window's total reads of Cobble over RocksDB's), which
 * shows a slow phase that a median hides. It also prints the bytes the reading thread allocated per
 * get for each engine.
 *
 * <p>Run: {@code java -Xms6g -Xmx6g -XX:+AlwaysPreTouch -cp benchmarks.jar
 * io.cobble.benchmarks.engine.PairedReads [readrandom|readwhilewriting] [pairs] [sliceMillis]}
 * (defaults readrandom, 150 and 400; keys from {@code -Dcobble.bench.keys}; extra Cobble config
 * entries, {@code key=value;key=value}, from {@code -Dcobble.bench.options}, to compare a Cobble
 * variant against the same RocksDB). With {@code -Dcobble.bench.against=<entries>} the second
 * engine is Cobble with those entries instead of RocksDB: two variants head to head, alike loaded.
 */
public final class PairedReads {
  private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

  /** Measured time per engine below which a run is refused: it would not reach steady state. */
  static final long MIN_MEASURED_MILLIS = 60_000;

  /** Consecutive pairs in the window whose worst ratio is reported. */
  static final int WINDOW = 10;

  private static final com.sun.management.ThreadMXBean ALLOCATION =
      (com.sun.management.ThreadMXBean) CPU;

  private PairedReads() {}

  public static void main(String[] args) {
    String shape = args.length > 0 ? args[0] : "readrandom";
    if (!shape.equals("readrandom") && !shape.equals("readwhilewriting")) {
      throw new IllegalArgumentException(
          "unknown shape '" + shape + "': use readrandom or readwhilewriting");
    }
    boolean writing = shape.equals("readwhilewriting");
    int pairs = args.length > 1 ? Integer.parseInt(args[1]) : 150;
    long sliceMillis = args.length > 2 ? Long.parseLong(args[2]) : 400;
    if (pairs * sliceMillis < MIN_MEASURED_MILLIS || pairs < 4 * WINDOW) {
      throw new IllegalArgumentException(
          pairs
              + " pairs of "
              + sliceMillis
              + " ms measure "
              + pairs * sliceMillis / 1000
              + " s per engine: use at least "
              + 4 * WINDOW
              + " pairs and pairs x sliceMillis >= "
              + MIN_MEASURED_MILLIS
              + " (for example 150 400) so the run reaches the steady state");
    }
    long sliceNanos = sliceMillis * 1_000_000L;
    int keys = Keys.count();
    byte[][] values = values();
    Path cobbleDir = Stores.freshDir(Stores.COBBLE);
    String against = System.getProperty("cobble.bench.against");
    String second = against == null ? Stores.ROCKSDB : Stores.COBBLE;
    String name = against == null ? "rocksdb" : "cobble[" + against + "]";
    Path rocksDir = Stores.freshDir(second);
    try (KvStore cobble =
            load(
                Stores.COBBLE,
                cobbleDir,
                keys,
                values,
                System.getProperty("cobble.bench.options"));
        KvStore rocks = load(second, rocksDir, keys, values, against)) {
      // The engine loaded first has had its files pushed out of the page cache by the second
      // one's load: read both stores' files back so neither starts with its files on disk alone.
      PageCache.load(cobbleDir);
      PageCache.load(rocksDir);
      for (int i = 0; i < 5; i++) {
        slice(cobble, keys, values, writing, sliceNanos);
        slice(rocks, keys, values, writing, sliceNanos);
      }
      double[] ratios = new double[pairs];
      double[] cpuRatios = new double[pairs];
      double[] writeRatios = new double[pairs];
      double[][] cobbleRuns = new double[pairs][];
      double[][] rocksRuns = new double[pairs][];
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
        cobbleRuns[i] = c;
        rocksRuns[i] = r;
        ratios[i] = c[0] / r[0];
        cpuRatios[i] = c[1] / r[1];
        writeRatios[i] = writing ? c[2] / r[2] : 0;
        System.out.printf(
            "pair %2d: cobble %,10.0f reads/s %,10.0f reads/cpu-s %,10.0f writes/s  %s %,10.0f"
                + " reads/s %,10.0f reads/cpu-s %,10.0f writes/s%n",
            i, c[0], c[1], c[2], name, r[0], r[1], r[2]);
      }
      int skip = pairs / 4;
      System.out.printf(
          "%s %,d keys, %d pairs of %d ms (%d s per engine): cobble %,.0f reads/s, %s %,.0f"
              + " reads/s%n",
          shape,
          keys,
          pairs,
          sliceMillis,
          pairs * sliceMillis / 1000,
          sums[0] / pairs,
          name,
          sums[1] / pairs);
      System.out.printf(
          "steady state (pairs %d-%d): read ratio %s; per reader cpu second %s%n",
          skip, pairs - 1, summary(ratios, skip), summary(cpuRatios, skip));
      System.out.printf(
          "bytes the reader allocated per get, steady state: cobble %,.1f, %s %,.1f%n",
          steadyMean(cobbleRuns, 3, skip), name, steadyMean(rocksRuns, 3, skip));
      System.out.printf(
          "worst window of %d pairs: read ratio %.3f (pairs %s); per reader cpu second %.3f"
              + " (pairs %s)%n",
          WINDOW,
          worstWindow(cobbleRuns, rocksRuns, 0)[0],
          windowName(worstWindow(cobbleRuns, rocksRuns, 0)),
          worstWindow(cobbleRuns, rocksRuns, 1)[0],
          windowName(worstWindow(cobbleRuns, rocksRuns, 1)));
      if (writing) {
        System.out.printf(
            "writer: cobble %,.0f writes/s, %s %,.0f writes/s; ratio %s%n",
            sums[2] / pairs, name, sums[3] / pairs, summary(writeRatios, skip));
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

  private static KvStore load(
      String engine, Path dir, int keys, byte[][] values, String cobbleOptions) {
    KvStore store = Stores.open(engine, dir, cobbleOptions == null ? "" : cobbleOptions);
    int[] order = Keys.shuffled(keys, 7);
    byte[] key = new byte[Keys.KEY_SIZE];
    for (int i = 0; i < keys; i++) {
      store.put(Keys.encode(order[i], key), values[i & 1023]);
    }
    store.settle();
    return store;
  }

  /**
   * The lowest ratio of summed results ({@code field} 0 = reads per second, 1 = reads per CPU
   * second) over {@link #WINDOW} consecutive pairs: {ratio, first pair}.
   */
  static double[] worstWindow(double[][] cobble, double[][] rocks, int field) {
    double[] worst = {Double.MAX_VALUE, 0};
    for (int from = 0; from + WINDOW <= cobble.length; from++) {
      double c = 0;
      double r = 0;
      for (int i = from; i < from + WINDOW; i++) {
        c += cobble[i][field];
        r += rocks[i][field];
      }
      if (c / r < worst[0]) {
        worst[0] = c / r;
        worst[1] = from;
      }
    }
    return worst;
  }

  /** The mean of {@code field} over the pairs from {@code skip} on. */
  private static double steadyMean(double[][] runs, int field, int skip) {
    double sum = 0;
    for (int i = skip; i < runs.length; i++) {
      sum += runs[i][field];
    }
    return sum / (runs.length - skip);
  }

  private static String windowName(double[] window) {
    int from = (int) window[1];
    return from + "-" + (from + WINDOW - 1);
  }

  /** Median, quartiles and range of {@code ratios} from index {@code skip} on. */
  static String summary(double[] ratios, int skip) {
    double[] r = Arrays.copyOfRange(ratios, skip, ratios.length);
    Arrays.sort(r);
    int n = r.length;
    return String.format(
        "median %.3f (quartiles %.3f-%.3f, min %.3f, max %.3f)",
        r[n / 2], r[n / 4], r[(3 * n) / 4], r[0], r[n - 1]);
  }

  /**
   * Runs gets of random stored keys for {@code nanos}, with a writer overwriting random keys
   * alongside when {@code writing}; returns reads per wall-clock second, reads per CPU second of
   * the reading thread, writes per second, and bytes the reading thread allocated per get.
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
    long self = Thread.currentThread().getId();
    long allocatedStart = ALLOCATION.getThreadAllocatedBytes(self);
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
    long allocated = ALLOCATION.getThreadAllocatedBytes(self) - allocatedStart;
    if (writer != null) {
      stop.set(true);
      try {
        writer.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    double seconds = (now - start) / 1e9;
    return new double[] {
      ops / seconds, ops * 1e9 / cpu, writes.get() / seconds, (double) allocated / ops
    };
  }
}
