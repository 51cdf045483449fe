package io.cobble.cache;

import java.util.Arrays;

/**
 * Arrays evicted from one {@link BlockCache} shard, kept for the next blocks to be decoded into.
 * Arrays come in size classes of {@link #GRANULE} bytes so that blocks of about the same size share
 * them; a request takes an array of its class or of one of the next {@link #REACH} classes. The
 * shard says how many bytes may be kept; arrays beyond that, or larger than the largest class, are
 * left to the garbage collector. A request that finds no array of its size drops kept arrays of
 * other sizes until one of its own fits: otherwise arrays of a size no longer asked for (the blocks
 * of tables a compaction replaced) would fill the allowance for good, every array the cache evicts
 * would be refused, and every miss would allocate. Not thread-safe: the shard's lock guards it.
 */
final class SpareArrays {
  static final int GRANULE = 256;
  private static final int CLASSES = 1024;
  private static final int REACH = 3;

  private final byte[][][] stacks = new byte[CLASSES][][];
  private final int[] counts = new int[CLASSES];
  private long bytes;

  /** The class whose arrays hold at least {@code length} bytes. */
  private static int classOf(int length) {
    return (length + GRANULE - 1) / GRANULE;
  }

  /**
   * A kept array of at least {@code length} bytes, or a new one of its class's size; in that case
   * kept arrays are dropped, smallest first, until an array of that size fits in {@code maxBytes}.
   */
  byte[] take(int length, long maxBytes) {
    int c = classOf(length);
    if (c >= CLASSES) {
      return new byte[length];
    }
    for (int k = c; k < Math.min(CLASSES, c + REACH + 1); k++) {
      int n = counts[k];
      if (n > 0) {
        byte[] a = stacks[k][n - 1];
        stacks[k][n - 1] = null;
        counts[k] = n - 1;
        // Kept arrays are exactly their class's size: their cold header is not read here.
        bytes -= (long) k * GRANULE;
        return a;
      }
    }
    makeRoom((long) c * GRANULE, maxBytes);
    return new byte[c * GRANULE];
  }

  private void makeRoom(long length, long maxBytes) {
    for (int k = 0; k < CLASSES && bytes + length > maxBytes; k++) {
      while (counts[k] > 0 && bytes + length > maxBytes) {
        int n = counts[k] - 1;
        stacks[k][n] = null;
        counts[k] = n;
        bytes -= (long) k * GRANULE;
      }
    }
  }

  /**
   * Keeps {@code array} (which no reader may still use) of {@code length} bytes if no more than
   * {@code maxBytes} are kept with it. The caller knows the length, so an array leaving the cache
   * cold is not read here (its header would cost a cache miss per eviction).
   */
  void give(byte[] array, int length, long maxBytes) {
    int c = length / GRANULE;
    if (c >= CLASSES || c * GRANULE != length || bytes + length > maxBytes) {
      return;
    }
    byte[][] stack = stacks[c];
    int n = counts[c];
    if (stack == null || n == stack.length) {
      stack = stack == null ? new byte[16][] : Arrays.copyOf(stack, n * 2);
      stacks[c] = stack;
    }
    stack[n] = array;
    counts[c] = n + 1;
    bytes += length;
  }
}
