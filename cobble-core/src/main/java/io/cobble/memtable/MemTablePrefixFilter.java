package io.cobble.memtable;

import io.cobble.sst.BloomFilter;
import io.cobble.sst.PrefixFilter;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.function.IntUnaryOperator;

/**
 * A memtable's record of which families and key prefixes it holds, so a per-key scan skips a
 * memtable that holds none of its keys instead of seeking it (a skiplist seek is a walk over
 * scattered records). A family is recorded at its first row in the memtable, with the prefix length
 * its tables use then ({@link io.cobble.sst.PrefixFilter}); each row of a family with a prefix
 * length adds that prefix to a blocked bloom filter (two bits in one 64-bit word). Only bits are
 * set, and the memtable's row count bounds how full it gets.
 *
 * <p>One writer (the memtable's, under its write lock) and lock-free readers: a row's family and
 * prefix bits are release-stored before the row is put, and read with acquire loads, so a reader
 * that could see the row sees them as well.
 */
public final class MemTablePrefixFilter {
  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

  /** A family of {@link #lengths} that has rows here but no prefix length. */
  private static final int UNFILTERED = -1;

  private final IntUnaryOperator familyPrefixLength;
  private final long[] words;
  // Per family id: 0 = no row of the family here yet, UNFILTERED, or the prefix length in tree-key
  // bytes. Replaced by a copy when it changes (once per family and memtable).
  private volatile int[] lengths = new int[0];
  // The writer's last prefix whose bits it set (see add).
  private int lastFamily = -1;
  private int lastLength;
  private byte[] lastPrefix = new byte[0];

  /**
   * A filter of about {@code bytes} bytes; {@code familyPrefixLength} gives a family's prefix
   * length in tree-key bytes (0 = none) when its first row arrives.
   */
  public MemTablePrefixFilter(long bytes, IntUnaryOperator familyPrefixLength) {
    this.familyPrefixLength = familyPrefixLength;
    this.words = new long[(int) Math.max(1, Math.min(bytes, 1 << 20) / 8)];
  }

  /** Records the row key {@code key[0..keyLen)} (family id, then the tree key). Single writer. */
  void add(byte[] key, int keyLen) {
    int family = familyOf(key);
    int[] l = lengths;
    int length = lengthOf(l, family);
    if (length == 0) {
      length = familyPrefixLength.applyAsInt(family);
      length = length > 0 ? length : UNFILTERED;
      int[] next = Arrays.copyOf(l, Math.max(l.length, family + 1));
      next[family] = length;
      // Bits first: a reader that sees the family's length finds every prefix it covers.
      add(family, length, key, keyLen);
      lengths = next;
      return;
    }
    add(family, length, key, keyLen);
  }

  /**
   * Sets the bits of the key's prefix; a key shorter than it lies in no one-prefix range. A prefix
   * equal to the last one set is skipped: the rows of one state key written together (a map's
   * {@code putAll}) share it, and each would otherwise pay a hash and a store to a random word.
   */
  private void add(int family, int length, byte[] key, int keyLen) {
    if (length > 0 && keyLen - 2 >= length) {
      if (family == lastFamily
          && length == lastLength
          && Arrays.equals(key, 2, 2 + length, lastPrefix, 0, length)) {
        return;
      }
      long h = hash(family, key, 2, length);
      int i = index(h);
      WORDS.setRelease(words, i, words[i] | mask(h));
      if (lastPrefix.length < length) {
        lastPrefix = new byte[length];
      }
      System.arraycopy(key, 2, lastPrefix, 0, length);
      lastFamily = family;
      lastLength = length;
    }
  }

  /**
   * Whether the memtable may hold a row of {@code family} with a tree key in {@code [lo, hi)} (null
   * = unbounded): false when it holds no row of the family, or when the range lies within one
   * prefix the filter has not seen.
   */
  public boolean mayHold(int family, byte[] lo, byte[] hi) {
    int length = lengthOf(lengths, family);
    if (length == 0) {
      return false;
    }
    if (length == UNFILTERED || !PrefixFilter.withinOnePrefix(lo, hi, length)) {
      return true;
    }
    return seen(family, lo, 0, length);
  }

  /**
   * Whether the memtable may hold the row key {@code key[0..keyLen)} (family id, then the tree
   * key): false when it holds no row of the family, or when the key is at least the family's prefix
   * long and the filter has not seen its prefix. A point get asks this before it searches the
   * memtable, so a get of a key written to older sources only costs a filter word (one cache line
   * of a small array) instead of the memtable's own search.
   */
  public boolean mayHoldKey(byte[] key, int keyLen) {
    int family = familyOf(key);
    int length = lengthOf(lengths, family);
    if (length == 0) {
      return false;
    }
    if (length == UNFILTERED || keyLen - 2 < length) {
      return true;
    }
    return seen(family, key, 2, length);
  }

  private static int familyOf(byte[] rowKey) {
    return ((rowKey[0] & 0xFF) << 8) | (rowKey[1] & 0xFF);
  }

  /** The family's prefix length, {@link #UNFILTERED}, or 0 when the memtable has no row of it. */
  private static int lengthOf(int[] lengths, int family) {
    return family < lengths.length ? lengths[family] : 0;
  }

  /** Whether the filter's bits are set for the prefix {@code key[off..off+length)}. */
  private boolean seen(int family, byte[] key, int off, int length) {
    long h = hash(family, key, off, length);
    long mask = mask(h);
    return ((long) WORDS.getAcquire(words, index(h)) & mask) == mask;
  }

  private static long hash(int family, byte[] key, int off, int length) {
    return (BloomFilter.hash(key, off, length) ^ family) * 0x9E3779B97F4A7C15L;
  }

  private int index(long h) {
    return (int) (((h >>> 32) * words.length) >>> 32);
  }

  private static long mask(long h) {
    return (1L << (h & 63)) | (1L << ((h >>> 6) & 63));
  }
}
