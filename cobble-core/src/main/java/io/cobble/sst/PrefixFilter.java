package io.cobble.sst;

import io.cobble.util.Bytes;

/**
 * A table's bloom filter over the first {@code length} bytes of its keys, so a scan over the keys
 * of one such prefix skips a table that holds none of them without seeking it. A family's rows are
 * often grouped under a fixed-length prefix (a state backend's key group, key and namespace), and a
 * per-key scan then covers exactly one prefix; the whole-key filter cannot answer for a range.
 *
 * <p>The filter holds one hash per distinct prefix. Keys shorter than {@code length} are left out:
 * no range that lies within one prefix can hold them. Stored as its own checksummed block; its
 * length and handle follow the properties in the properties block (format version 3).
 *
 * <p>Each filter judges whether its probes pay ({@link FilterUse}): one that rules out almost no
 * range asked about (a state backend's bottom level holds every key that has state) answers "may
 * hold" unprobed for most ranges, which costs a scan only the seek the filter would have saved.
 */
public final class PrefixFilter {
  private final int length;
  private final byte[] bits;
  private final int trailer;
  private final FilterUse use = new FilterUse();

  PrefixFilter(int length, byte[] bits) {
    this.length = length;
    this.bits = bits;
    this.trailer = BloomFilter.trailerOf(bits);
  }

  /** Prefix length in table-key bytes. */
  public int length() {
    return length;
  }

  /**
   * Whether the table may hold a key in {@code [lo, hi)} ({@code hi} null = unbounded). False only
   * when every key of the range starts with {@code lo}'s first {@link #length} bytes and no key of
   * the table has that prefix, and the filter is probed for it ({@link FilterUse}).
   */
  public boolean mayHold(byte[] lo, byte[] hi) {
    if (!withinOnePrefix(lo, hi, length)) {
      return true;
    }
    if (!use.shouldProbe()) {
      return true;
    }
    boolean may = BloomFilter.mayContain(bits, trailer, BloomFilter.hash(lo, 0, length));
    use.record(!may);
    return may;
  }

  /**
   * Whether every key of {@code [lo, hi)} starts with {@code lo}'s first {@code length} bytes p:
   * exactly when {@code hi} is at most the first key after every key that starts with p.
   */
  public static boolean withinOnePrefix(byte[] lo, byte[] hi, int length) {
    if (lo == null || hi == null || lo.length < length) {
      return false;
    }
    // The first key after p is p with trailing 0xFF bytes dropped and its last byte incremented.
    int last = length - 1;
    while (last >= 0 && lo[last] == (byte) 0xFF) {
      last--;
    }
    if (last < 0) {
      return false;
    }
    int c = Bytes.compare(hi, 0, Math.min(hi.length, last), lo, 0, last);
    if (c != 0) {
      return c < 0;
    }
    if (hi.length <= last) {
      return true;
    }
    int h = hi[last] & 0xFF;
    int p = (lo[last] & 0xFF) + 1;
    return h < p || (h == p && hi.length == last + 1);
  }
}
