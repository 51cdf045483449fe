package io.cobble.util;

import java.util.Arrays;

/** Unsigned lexicographic byte comparison and small helpers shared by every layer. */
public final class Bytes {
  public static final byte[] EMPTY = new byte[0];

  private Bytes() {}

  public static int compare(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b);
  }

  public static int compare(byte[] a, int aOff, int aLen, byte[] b, int bOff, int bLen) {
    return Arrays.compareUnsigned(a, aOff, aOff + aLen, b, bOff, bOff + bLen);
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
    dst[off] = (byte) (v >>> 24);
    dst[off + 1] = (byte) (v >>> 16);
    dst[off + 2] = (byte) (v >>> 8);
    dst[off + 3] = (byte) v;
  }

  public static int getInt(byte[] src, int off) {
    return ((src[off] & 0xFF) << 24)
        | ((src[off + 1] & 0xFF) << 16)
        | ((src[off + 2] & 0xFF) << 8)
        | (src[off + 3] & 0xFF);
  }

  public static void putLong(byte[] dst, int off, long v) {
    putInt(dst, off, (int) (v >>> 32));
    putInt(dst, off + 4, (int) v);
  }

  public static long getLong(byte[] src, int off) {
    return ((long) getInt(src, off) << 32) | (getInt(src, off + 4) & 0xFFFFFFFFL);
  }

  /** Smallest key strictly greater than every key with prefix {@code a}, or null if none. */
  public static byte[] successor(byte[] a) {
    byte[] out = a.clone();
    for (int i = out.length - 1; i >= 0; i--) {
      if (out[i] != (byte) 0xFF) {
        out[i]++;
        return Arrays.copyOf(out, i + 1);
      }
    }
    return null;
  }
}
