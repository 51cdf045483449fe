package io.cobble.sst;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Bloom filter over 64-bit key hashes, built per filter partition. Layout: bit array, then one
 * trailer byte; an empty filter (no bits) answers "maybe".
 *
 * <p>Filters are written cache-local (trailer {@code 0x80 | probes}): the high 32 bits of the hash
 * pick one 64-byte block, and every probe sets a bit inside it, so a lookup touches one cache line
 * instead of one per probe (the layout RocksDB's current filters use, with a similar false-positive
 * rate). Files written before that carry the plain layout (trailer {@code probes}), still read
 * here: probe {@code p} tests bit {@code (h1 + p * h2) mod nbits} over the whole array, computed
 * incrementally (two remainders per key, then add and wrap). A reader that predates the cache-local
 * layout sees a negative probe count and answers "maybe", which is slow but never wrong.
 */
public final class BloomFilter {
  /** Trailer flag of the cache-local layout. */
  private static final int LOCAL = 0x80;

  private static final int BLOCK_BYTES = 64;
  private static final int BLOCK_BITS = BLOCK_BYTES * 8;

  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private BloomFilter() {}

  public static long hash(byte[] key) {
    return hash(key, 0, key.length);
  }

  /** {@link #hash(byte[])} of {@code key[off..off + len)}. */
  public static long hash(byte[] key, int off, int len) {
    long h = 0xcbf29ce484222325L ^ len;
    int i = off;
    int end = off + len;
    for (; i + 8 <= end; i += 8) {
      // One big-endian load: the same word the hash was first defined with, built byte by byte.
      h = (h ^ mix((long) LONG_BE.get(key, i))) * 0x9E3779B97F4A7C15L;
    }
    for (; i < end; i++) {
      h = (h ^ (key[i] & 0xFF)) * 0x100000001B3L;
    }
    return mix(h);
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return z ^ (z >>> 33);
  }

  private static int probes(int bitsPerKey) {
    return Math.max(1, Math.min(30, (int) Math.round(bitsPerKey * 0.69)));
  }

  /** Builds a cache-local filter for {@code count} hashes. */
  public static byte[] build(long[] hashes, int count, int bitsPerKey) {
    int probes = probes(bitsPerKey);
    long bits = Math.max(BLOCK_BITS, (long) count * bitsPerKey);
    int blocks = (int) ((bits + BLOCK_BITS - 1) / BLOCK_BITS);
    byte[] out = new byte[blocks * BLOCK_BYTES + 1];
    for (int i = 0; i < count; i++) {
      long h = hashes[i];
      int base = block(h, blocks);
      int x = (int) h;
      for (int p = 0; p < probes; p++) {
        x *= 0x9E3779B9;
        int bit = x >>> 23;
        out[base + (bit >>> 3)] |= (byte) (1 << (bit & 7));
      }
    }
    out[blocks * BLOCK_BYTES] = (byte) (LOCAL | probes);
    return out;
  }

  /** Byte offset of the 64-byte block of hash {@code h}: high 32 bits scaled onto the blocks. */
  private static int block(long h, int blocks) {
    return (int) (((h >>> 32) * blocks) >>> 32) * BLOCK_BYTES;
  }

  public static boolean mayContain(byte[] filter, long h) {
    return mayContain(filter, trailerOf(filter), h);
  }

  /**
   * The trailer byte of {@code filter}, or -1 for an empty filter. Readers that keep filters keep
   * this beside them: the trailer sits in the filter's last cache line, one a probe would otherwise
   * touch besides the line it tests.
   */
  static int trailerOf(byte[] filter) {
    return filter.length < 2 ? -1 : filter[filter.length - 1] & 0xFF;
  }

  /** As {@link #mayContain(byte[], long)} with the filter's {@link #trailerOf trailer}. */
  static boolean mayContain(byte[] filter, int trailer, long h) {
    if (trailer < 0) {
      return true;
    }
    int bytes = filter.length - 1;
    if ((trailer & LOCAL) != 0) {
      return mayContainLocal(filter, bytes, trailer & ~LOCAL, h);
    }
    int probes = trailer;
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

  private static boolean mayContainLocal(byte[] filter, int bytes, int probes, long h) {
    int blocks = bytes / BLOCK_BYTES;
    if (blocks == 0) {
      return true;
    }
    int base = block(h, blocks);
    int x = (int) h;
    for (int p = 0; p < probes; p++) {
      x *= 0x9E3779B9;
      int bit = x >>> 23;
      if ((filter[base + (bit >>> 3)] & (1 << (bit & 7))) == 0) {
        return false;
      }
    }
    return true;
  }

  static long[] grow(long[] a) {
    return Arrays.copyOf(a, a.length * 2);
  }
}
