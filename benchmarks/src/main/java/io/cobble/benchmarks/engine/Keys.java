package io.cobble.benchmarks.engine;

import java.util.SplittableRandom;

/**
 * db_bench-style keys and values: 16-byte keys (an 8-byte big-endian number, then 8 filler bytes)
 * and 100-byte values, half random and half zeros so LZ4 sees db_bench's 0.5 compression ratio.
 */
final class Keys {
  static final int KEY_SIZE = 16;
  static final int VALUE_SIZE = 100;

  /** Stored keys per store: 1 M, or {@code -Dcobble.bench.keys} (the opt-in 10 M profile). */
  private static final int COUNT = checkedCount(Integer.getInteger("cobble.bench.keys", 1_000_000));

  private Keys() {}

  /**
   * The number of stored keys. JMH forks inherit the launching JVM's {@code -D} options, so {@code
   * java -Dcobble.bench.keys=10000000 -jar benchmarks.jar ...} sizes every fork.
   */
  static int count() {
    return COUNT;
  }

  private static int checkedCount(int n) {
    if (n < 1_000_000 || n % 1_000_000 != 0) {
      throw new IllegalArgumentException(
          "invalid cobble.bench.keys "
              + n
              + ": use a whole number of millions (fills write 1 M keys per invocation)");
    }
    return n;
  }

  /**
   * Writes stored key number {@code index} into {@code key} (reused by the caller). Stored keys are
   * the even numbers, so the odd ones in between are misses that fall inside every file's key range
   * and must be answered by the bloom filter, as in db_bench.
   */
  static byte[] encode(long index, byte[] key) {
    return write(2 * index, key);
  }

  /** Writes a key that lies between stored keys {@code index} and {@code index + 1}. */
  static byte[] encodeMissing(long index, byte[] key) {
    return write(2 * index + 1, key);
  }

  private static byte[] write(long number, byte[] key) {
    for (int i = 0; i < 8; i++) {
      key[i] = (byte) (number >>> (56 - 8 * i));
    }
    for (int i = 8; i < KEY_SIZE; i++) {
      key[i] = (byte) 'k';
    }
    return key;
  }

  static byte[] value(SplittableRandom random) {
    byte[] value = new byte[VALUE_SIZE];
    for (int i = 0; i < VALUE_SIZE / 2; i++) {
      value[i] = (byte) random.nextInt(256);
    }
    return value;
  }

  /** A random permutation of 0..n-1, so fills write every key once in random order. */
  static int[] shuffled(int n, long seed) {
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    SplittableRandom random = new SplittableRandom(seed);
    for (int i = n - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    return order;
  }
}
