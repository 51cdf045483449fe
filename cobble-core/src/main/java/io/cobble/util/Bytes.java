package io.cobble.util;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/** Unsigned lexicographic byte comparison and small helpers shared by every layer. */
public final class Bytes {
  public static final byte[] EMPTY = new byte[0];

  private Bytes() {}

  // Big-endian views: one (bounds-checked) load or store instead of one per byte, which C2 on the
  // JDKs we run does not merge by itself.
  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private static final VarHandle INT_BE =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

  /** Ranges at least this long go to {@link Arrays#compareUnsigned} (vectorized). */
  private static final int WORDWISE_MAX = 64;

  public static int compare(byte[] a, byte[] b) {
    if (a == null || b == null) {
      return Arrays.compareUnsigned(a, b);
    }
    return compare(a, 0, a.length, b, 0, b.length);
  }

  /**
   * Unsigned lexicographic comparison with the same result as {@link Arrays#compareUnsigned}: the
   * unsigned difference of the first differing bytes, else the length difference. Short ranges
   * (typical keys) compare eight bytes at a time through big-endian long loads, which avoids the
   * setup cost of the general mismatch routine.
   */
  public static int compare(byte[] a, int aOff, int aLen, byte[] b, int bOff, int bLen) {
    int n = Math.min(aLen, bLen);
    if (n >= WORDWISE_MAX
        || aOff < 0
        || bOff < 0
        || aLen < 0
        || bLen < 0
        || aOff + aLen > a.length
        || bOff + bLen > b.length) {
      return Arrays.compareUnsigned(a, aOff, aOff + aLen, b, bOff, bOff + bLen);
    }
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      long x = (long) LONG_BE.get(a, aOff + i);
      long y = (long) LONG_BE.get(b, bOff + i);
      if (x != y) {
        int d = Long.numberOfLeadingZeros(x ^ y) >>> 3;
        return (a[aOff + i + d] & 0xFF) - (b[bOff + i + d] & 0xFF);
      }
    }
    for (; i < n; i++) {
      int x = a[aOff + i] & 0xFF;
      int y = b[bOff + i] & 0xFF;
      if (x != y) {
        return x - y;
      }
    }
    return aLen - bLen;
  }

  /**
   * The index of the first byte where the two ranges differ, the shorter length when one is a
   * prefix of the other, or -1 when they are equal ({@link Arrays#mismatch} relative to the
   * offsets). Short ranges go eight bytes at a time, as in {@link #compare}.
   */
  public static int mismatch(byte[] a, int aOff, int aLen, byte[] b, int bOff, int bLen) {
    int n = Math.min(aLen, bLen);
    if (n >= WORDWISE_MAX
        || aOff < 0
        || bOff < 0
        || aLen < 0
        || bLen < 0
        || aOff + aLen > a.length
        || bOff + bLen > b.length) {
      return Arrays.mismatch(a, aOff, aOff + aLen, b, bOff, bOff + bLen);
    }
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      long x = (long) LONG_BE.get(a, aOff + i);
      long y = (long) LONG_BE.get(b, bOff + i);
      if (x != y) {
        return i + (Long.numberOfLeadingZeros(x ^ y) >>> 3);
      }
    }
    for (; i < n; i++) {
      if (a[aOff + i] != b[bOff + i]) {
        return i;
      }
    }
    return aLen == bLen ? -1 : n;
  }

  public static int commonPrefix(byte[] a, int aLen, byte[] b, int bOff, int bLen) {
    int n = Math.min(aLen, bLen);
    int m = Arrays.mismatch(a, 0, n, b, bOff, bOff + n);
    return m < 0 ? n : m;
  }

  public static int hash(byte[] a, int off, int len) {
    int h = 0x9747b28c;
    for (int i = off; i < off + len; i++) {
      h = (h ^ (a[i] & 0xFF)) * 0x01000193;
    }
    h ^= h >>> 15;
    h *= 0x2c1b3c6d;
    h ^= h >>> 12;
    return h;
  }

  public static int getShort(byte[] src, int off) {
    return ((src[off] & 0xFF) << 8) | (src[off + 1] & 0xFF);
  }

  public static void putInt(byte[] dst, int off, int v) {
    INT_BE.set(dst, off, v);
  }

  public static int getInt(byte[] src, int off) {
    return (int) INT_BE.get(src, off);
  }

  public static void putLong(byte[] dst, int off, long v) {
    LONG_BE.set(dst, off, v);
  }

  public static long getLong(byte[] src, int off) {
    return (long) LONG_BE.get(src, off);
  }

  /** Smallest key strictly greater than every key with prefix {@code a}, or null if none. */
  public static byte[] successor(byte[] a) {
    int length = a.length;
    while (length > 0 && a[length - 1] == (byte) 0xFF) {
      length--;
    }
    if (length == 0) {
      return null;
    }
    byte[] out = Arrays.copyOf(a, length);
    out[length - 1]++;
    return out;
  }
}
