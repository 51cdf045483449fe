package io.cobble.benchmarks.reader;

import io.cobble.reader.RowCache;
import io.cobble.util.ColumnsSink;
import java.util.Random;

/**
 * The row cache's own cost per lookup and its hit ratio, by how many keys the lookups spread over:
 * 10 M lookups per round (uniform, or skewed towards low key numbers), each miss filled as a lookup
 * source fills it (three values recorded, then kept). A plain measured main: the question is how
 * memory latency grows with the working set, which one JMH invocation per set size would answer no
 * better.
 *
 * <pre>
 * java -Xms3g -Xmx3g -cp benchmarks/target/benchmarks.jar \
 *     io.cobble.benchmarks.reader.RowCacheMeasurement CAPACITY_MB KEYS VALUE_BYTES [SKEW]
 * </pre>
 *
 * SKEW 0 (default) draws keys uniformly; SKEW s draws key {@code floor(u^s * KEYS)} for uniform u,
 * so larger s puts more lookups on fewer keys.
 */
public final class RowCacheMeasurement {
  private static final int LOOKUPS = 10_000_000;
  private static final int ROUNDS = 3;

  private RowCacheMeasurement() {}

  public static void main(String[] args) {
    if (args.length < 3) {
      throw new IllegalArgumentException("usage: CAPACITY_MB KEYS VALUE_BYTES [SKEW]");
    }
    long capacity = Long.parseLong(args[0]) << 20;
    int keys = Integer.parseInt(args[1]);
    int valueBytes = Integer.parseInt(args[2]);
    double skew = args.length > 3 ? Double.parseDouble(args[3]) : 0;
    RowCache cache = new RowCache(capacity);
    long owner = cache.newOwner();
    byte[] value = new byte[valueBytes];
    byte[][] keyBytes = new byte[keys][];
    for (int i = 0; i < keys; i++) {
      keyBytes[i] = new byte[9];
      long v = i * 2654435761L;
      for (int j = 0; j < 8; j++) {
        keyBytes[i][j] = (byte) (v >>> (8 * j));
      }
    }
    Random random = new Random(1);
    int[] order = new int[LOOKUPS];
    for (int i = 0; i < LOOKUPS; i++) {
      order[i] =
          skew > 0
              ? (int) Math.min(keys - 1, Math.pow(random.nextDouble(), skew) * keys)
              : random.nextInt(keys);
    }
    long[] sum = new long[1];
    ColumnsSink sink = (index, buf, off, len) -> sum[0] += len;
    System.out.printf(
        "row cache %d MB, %,d keys, %d-byte values, skew %s%n",
        capacity >> 20, keys, valueBytes, skew);
    for (int round = 0; round < ROUNDS; round++) {
      long hits = 0;
      long start = System.nanoTime();
      for (int i = 0; i < LOOKUPS; i++) {
        byte[] key = keyBytes[order[i]];
        if (cache.read(owner, 1, key, sink) != RowCache.NOT_CACHED) {
          hits++;
          continue;
        }
        RowCache.Recorder recorder = cache.recorder(sink);
        recorder.accept(0, value, 0, valueBytes);
        recorder.accept(1, value, 0, 4);
        recorder.accept(2, value, 0, 8);
        cache.put(owner, 1, key, recorder, true);
      }
      long nanos = System.nanoTime() - start;
      System.out.printf(
          "round %d: %.1f ns per lookup, hit ratio %.3f, cache %d MB%n",
          round, (double) nanos / LOOKUPS, (double) hits / LOOKUPS, cache.usage() >> 20);
    }
    if (sum[0] == 42) {
      System.out.println();
    }
  }
}
