package io.cobble.sst;

import io.cobble.util.ByteReader;
import io.cobble.util.Bytes;
import java.util.Arrays;

/**
 * An index block decoded once for point reads (the "decoded metadata" that {@code
 * sst.read-metadata-cache.mode} keeps for pinned index blocks). Seeking a block binary-searches its
 * restart array and parses a varint header at each step, touching two scattered cache lines per
 * step; here the search runs over one dense array of the eight key bytes that follow the prefix all
 * keys share (starting from a guess by interpolation, see {@link #lowerBound}), and falls back to a
 * full key comparison only when those bytes tie. Values are decoded once too (a top-level entry's
 * partition ordinal, an index partition entry's data block offset and size), so a get parses no
 * varints and touches no block bytes.
 */
final class DecodedIndex {
  /** Entries from which a search starts with a guess by interpolation. */
  private static final int INTERPOLATE_MIN = 16;

  private final int count;

  /** Bytes every key starts with; a target that does not start with them is outside the keys. */
  private final byte[] common;

  /** Per entry, key bytes {@code common.length ..+8} as an unsigned big-endian long (0-padded). */
  private final long[] prefixes;

  /** All keys back to back, and each key's start (entry i spans starts[i]..starts[i+1]). */
  private final byte[] keys;

  private final int[] starts;

  /**
   * Per entry, the decoded value: the partition ordinal at {@code 2i} (top level), or the data
   * block's offset at {@code 2i} and size at {@code 2i+1} (index partition), adjacent so a get
   * reads both from one cache line.
   */
  private final long[] values;

  /** The top-level index: each value starts with the partition's ordinal. */
  static DecodedIndex top(Block block) {
    return new DecodedIndex(block, true);
  }

  /** An index partition: each value is a data block's handle. */
  static DecodedIndex partition(Block block) {
    return new DecodedIndex(block, false);
  }

  /** Decodes every entry of {@code block}; throws IllegalStateException when it is malformed. */
  private DecodedIndex(Block block, boolean top) {
    int n = 0;
    int keyBytes = 0;
    BlockIterator it = block.iterator();
    for (it.seekToFirst(); it.valid(); it.next()) {
      n++;
      keyBytes += it.keyLength();
    }
    count = n;
    keys = new byte[keyBytes];
    starts = new int[n + 1];
    values = new long[2 * n];
    ByteReader r = new ByteReader();
    int i = 0;
    int pos = 0;
    for (it.seekToFirst(); it.valid(); it.next()) {
      starts[i] = pos;
      pos += it.copyKey(keys, pos);
      it.valueReader(r);
      if (top) {
        values[2 * i] = r.readVarInt();
      } else {
        values[2 * i] = r.readVarLong();
        values[2 * i + 1] = r.readVarInt();
      }
      i++;
    }
    starts[n] = pos;
    // Keys are sorted, so the prefix all of them share is the one the first and last share.
    int shared =
        n == 0 ? 0 : Bytes.commonPrefix(keys, length(0), keys, starts[n - 1], length(n - 1));
    common = Arrays.copyOf(keys, shared);
    prefixes = new long[n];
    for (int e = 0; e < n; e++) {
      prefixes[e] = prefix(keys, starts[e] + shared, length(e) - shared);
    }
  }

  private int length(int entry) {
    return starts[entry + 1] - starts[entry];
  }

  /** Eight bytes from {@code off} as an unsigned big-endian long, zero-padded past {@code len}. */
  static long prefix(byte[] a, int off, int len) {
    if (len >= 8) {
      return Bytes.getLong(a, off);
    }
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (i < len ? a[off + i] & 0xFF : 0);
    }
    return v;
  }

  int count() {
    return count;
  }

  /** The first entry whose key is {@code >= target}, or {@link #count()} when there is none. */
  int lowerBound(byte[] target) {
    int skip = common.length;
    int c = Bytes.compare(common, 0, skip, target, 0, Math.min(skip, target.length));
    if (c > 0 || (c == 0 && target.length < skip)) {
      return 0;
    }
    if (c < 0) {
      return count;
    }
    long t = prefix(target, skip, target.length - skip);
    int lo = 0;
    int hi = count;
    if (count >= INTERPOLATE_MIN) {
      // Guess the position from where the target's prefix falls between the first and the last
      // one, then widen a bracket around the guess in doubling steps: with keys spread evenly the
      // answer lies a few entries from the guess, so the search stays within one or two cache
      // lines of the prefix array instead of one line per binary-search step; with keys spread
      // unevenly the bracket costs about twice the steps of a plain binary search.
      long first = prefixes[0];
      long span = (prefixes[count - 1] - first) >>> 11;
      long offset = (t - first) >>> 11;
      if (span != 0
          && Long.compareUnsigned(t, first) > 0
          && Long.compareUnsigned(t, prefixes[count - 1]) <= 0) {
        int guess = (int) ((double) offset / span * (count - 1));
        if (below(guess, t, target)) {
          lo = guess + 1;
          for (int step = 1; ; step <<= 1) {
            int probe = guess + step;
            if (probe >= count) {
              break;
            }
            if (!below(probe, t, target)) {
              hi = probe;
              break;
            }
            lo = probe + 1;
          }
        } else {
          hi = guess;
          for (int step = 1; ; step <<= 1) {
            int probe = guess - step;
            if (probe < 0) {
              break;
            }
            if (below(probe, t, target)) {
              lo = probe + 1;
              break;
            }
            hi = probe;
          }
        }
      }
    }
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (below(mid, t, target)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** Whether entry {@code i} is below {@code target}, whose prefix is {@code t}. */
  private boolean below(int i, long t, byte[] target) {
    int cmp = Long.compareUnsigned(prefixes[i], t);
    if (cmp == 0) {
      cmp = Bytes.compare(keys, starts[i], length(i), target, 0, target.length);
    }
    return cmp < 0;
  }

  /** The partition ordinal of top-level {@code entry}. */
  int ordinal(int entry) {
    return (int) values[2 * entry];
  }

  /** The data block offset of index partition {@code entry}. */
  long dataOffset(int entry) {
    return values[2 * entry];
  }

  /** The data block size of index partition {@code entry}. */
  int dataSize(int entry) {
    return (int) values[2 * entry + 1];
  }
}
