package io.cobble.sst;

import java.util.Arrays;

/**
 * Bloom filter over 64-bit key hashes with double hashing. Layout: bit array, then one byte with
 * the probe count. Built per filter partition; an empty filter (no bits) answers "maybe".
 *
 * <p>Probe {@code p} sets bit {@code (h1 + p * h2) mod nbits}. Both terms are non-negative, so the
 * positions are computed incrementally (two remainders per key, then add and wrap) instead of one
 * 64-bit division per probe; the bits are the same as before, so the format is unchanged.
 */
public final class BloomFilter {
  private BloomFilter() {}

  public static long hash(byte[] key) {
    long h = 0xcbf29ce484222325L ^ key.length;
    int i = 0;
    for (; i + 8 <= key.length; i += 8) {
      long k =
          ((long) (key[i] & 0xFF) << 56)
              | ((long) (key[i + 1] & 0xFF) << 48)
              | ((long) (key[i + 2] & 0xFF) << 40)
              | ((long) (key[i + 3] & 0xFF) << 32)
              | ((long) (key[i + 4] & 0xFF) << 24)
              | ((key[i + 5] & 0xFF) << 16)
              | ((key[i + 6] & 0xFF) << 8)
              | (key[i + 7] & 0xFF);
      h = (h ^ mix(k)) * 0x9E3779B97F4A7C15L;
    }
    for (; i < key.length; i++) {
      h = (h ^ (key[i] & 0xFF)) * 0x100000001B3L;
    }
    return mix(h);
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return z ^ (z >>> 33);
  }

  /** Builds a filter for {@code count} hashes. */
  public static byte[] build(long[] hashes, int count, int bitsPerKey) {
    int probes = Math.max(1, Math.min(30, (int) Math.round(bitsPerKey * 0.69)));
    long bits = Math.max(64, (long) count * bitsPerKey);
    int bytes = (int) ((bits + 7) / 8);
    byte[] out = new byte[bytes + 1];
    long nbits = (long) bytes * 8;
    for (int i = 0; i < count; i++) {
      long h = hashes[i];
      long bit = (h & 0xFFFFFFFFL) % nbits;
      long step = ((h >>> 32) | 1) % nbits;
      for (int p = 0; p < probes; p++) {
        out[(int) (bit >>> 3)] |= (byte) (1 << (bit & 7));
        bit += step;
        if (bit >= nbits) {
          bit -= nbits;
        }
      }
    }
    out[bytes] = (byte) probes;
    return out;
  }

  public static boolean mayContain(byte[] filter, long h) {
    if (filter.length < 2) {
      return true;
    }
    int bytes = filter.length - 1;
    int probes = filter[bytes];
    long nbits = (long) bytes * 8;
    long bit = (h & 0xFFFFFFFFL) % nbits;
    long step = ((h >>> 32) | 1) % nbits;
    for (int p = 0; p < probes; p++) {
      if ((filter[(int) (bit >>> 3)] & (1 << (bit & 7))) == 0) {
        return false;
      }
      bit += step;
      if (bit >= nbits) {
        bit -= nbits;
      }
    }
    return true;
  }

  static long[] grow(long[] a) {
    return Arrays.copyOf(a, a.length * 2);
  }
}
