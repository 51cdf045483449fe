package io.cobble.memtable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The byte positions in which a set of keys differ, gathered one key at a time: the AND and the OR
 * of their first {@link #MAX_WORDS} big-endian words (zero past a key's end) and their shortest and
 * longest length. A position where the two differ varies; every other position holds the same byte
 * in every key. {@link SortedRecords#packVaryingBytes} sorts on the varying bytes alone; a vec
 * memtable gathers its shape as keys are appended, while they are in the writer's cache, so the
 * flush does not read the arena an extra time to find it.
 */
final class KeyShape {
  /** Keys up to this many 8-byte words are followed; a longer one makes the shape unusable. */
  static final int MAX_WORDS = 8;

  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private final long[] and = new long[MAX_WORDS];
  private final long[] or = new long[MAX_WORDS];
  private int minLength = Integer.MAX_VALUE;
  private int maxLength;

  KeyShape() {
    Arrays.fill(and, -1L);
  }

  /** Adds the {@code len}-byte key at {@code b[off]}. */
  void add(byte[] b, int off, int len) {
    minLength = Math.min(minLength, len);
    maxLength = Math.max(maxLength, len);
    int n = Math.min(len, MAX_WORDS * 8);
    int w = 0;
    for (; 8 * w + 8 <= n; w++) {
      long x = (long) LONG_BE.get(b, off + 8 * w);
      and[w] &= x;
      or[w] |= x;
    }
    int tail = n - 8 * w;
    if (tail > 0) {
      long x = lastWord(b, off + 8 * w, tail);
      and[w] &= x;
      or[w] |= x;
    }
  }

  /** The {@code tail} bytes at {@code b[at]} (1 to 7) as the top of a big-endian word. */
  private static long lastWord(byte[] b, int at, int tail) {
    if (at + 8 <= b.length) {
      // The bytes after the key (its value, the next record) are read and masked off.
      return (long) LONG_BE.get(b, at) & (-1L << (64 - 8 * tail));
    }
    long x = 0;
    for (int i = 0; i < tail; i++) {
      x |= (b[at + i] & 0xFFL) << (56 - 8 * i);
    }
    return x;
  }

  /** Whether some key is longer than the words followed (or none was added). */
  boolean tooLong() {
    return maxLength > MAX_WORDS * 8 || minLength == Integer.MAX_VALUE;
  }

  boolean lengthVaries() {
    return minLength != maxLength;
  }

  /**
   * Word {@code w}'s varying bits: where the keys' bytes differ, and the whole word once some key
   * ends before it (its zero padding against another key's bytes).
   */
  private long diff(int w) {
    long a = 8 * w < minLength ? and[w] : 0;
    return a ^ or[w];
  }

  /** Varying byte positions, plus one for a varying length. */
  int varyingCount() {
    int n = lengthVaries() ? 1 : 0;
    for (int w = 0; w < MAX_WORDS; w++) {
      long d = diff(w);
      // One bit per differing byte: fold each byte's bits into its lowest bit.
      d |= d >>> 4;
      d |= d >>> 2;
      d |= d >>> 1;
      n += Long.bitCount(d & 0x0101010101010101L);
    }
    return n;
  }

  /** The varying byte positions (0 to {@code 8 * MAX_WORDS - 1}), in key order. */
  int[] positions() {
    int[] p = new int[MAX_WORDS * 8];
    int n = 0;
    for (int b = 0; b < MAX_WORDS * 8; b++) {
      if ((diff(b >>> 3) >>> (56 - 8 * (b & 7)) & 0xFF) != 0) {
        p[n++] = b;
      }
    }
    return Arrays.copyOf(p, n);
  }
}
