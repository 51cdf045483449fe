package io.cobble.memtable;

/**
 * A reference to a vec memtable record in one long, as its point-read index stores them (bucket
 * heads and chain links): the record's number (1-based; 0 is no record), a tag of its key's hash,
 * and, when it fits, its arena address with the replaces-older flag. A chain walk checks the tag
 * before it touches the record, and goes from the reference straight to the record, without the
 * record's entry in the address array: one dependent cache miss per step instead of two.
 *
 * <p>Layout, low bits first: number (31), tag (the hash's top 5 bits), replaces-older (1), arena
 * page + 1 and page offset (27 together: an offset wide enough for {@link Arena#MAX_PAGE_SIZE},
 * which a larger page's one record at offset 0 also fits; the page takes the rest, 7 bits for 1-MiB
 * pages, 5 for 4-MiB ones, 0 when the address is not carried). Records on pages from {@link
 * #CARRIED_PAGES} on (past about 100 MB of arena) are reached through the address array.
 */
final class RecordRef {
  static final long NONE = 0L;
  private static final int OFFSET_BITS = 32 - Integer.numberOfLeadingZeros(Arena.MAX_PAGE_SIZE - 1);
  private static final int PAGE_BITS = 27 - OFFSET_BITS;
  static final int CARRIED_PAGES = (1 << PAGE_BITS) - 1;

  private static final long NUMBER_MASK = (1L << 31) - 1;
  private static final int TAG_SHIFT = 31;
  private static final int TAG_BITS = 5;
  private static final int REPLACES_SHIFT = TAG_SHIFT + TAG_BITS;
  private static final int PAGE_SHIFT = REPLACES_SHIFT + 1;
  private static final int OFFSET_SHIFT = PAGE_SHIFT + PAGE_BITS;
  private static final long OFFSET_LIMIT = 1L << OFFSET_BITS;

  private RecordRef() {}

  /**
   * Record {@code number} (1-based) of key hash {@code hash} at {@code addr} (an index address).
   */
  static long of(int number, int hash, long addr) {
    long ref = number | (long) tag(hash) << TAG_SHIFT;
    long page = addr >>> 32;
    long offset = addr & (Arena.REPLACES_OLDER - 1);
    if (page < CARRIED_PAGES && offset < OFFSET_LIMIT) {
      long replaces = (addr & Arena.REPLACES_OLDER) != 0 ? 1L << REPLACES_SHIFT : 0;
      ref |= replaces | (page + 1) << PAGE_SHIFT | offset << OFFSET_SHIFT;
    }
    return ref;
  }

  private static int tag(int hash) {
    return hash >>> (32 - TAG_BITS);
  }

  static int number(long ref) {
    return (int) (ref & NUMBER_MASK);
  }

  /** False only when the referenced record's key hash differs from {@code hash}. */
  static boolean mayMatch(long ref, int hash) {
    return (int) (ref >>> TAG_SHIFT & ((1 << TAG_BITS) - 1)) == tag(hash);
  }

  /** The record's address with its replaces-older flag, or {@link Arena#NONE} if not carried. */
  static long address(long ref) {
    long page = (ref >>> PAGE_SHIFT & CARRIED_PAGES) - 1;
    if (page < 0) {
      return Arena.NONE;
    }
    long addr = page << 32 | ref >>> OFFSET_SHIFT;
    return (ref & 1L << REPLACES_SHIFT) != 0 ? addr | Arena.REPLACES_OLDER : addr;
  }
}
