package io.cobble.sst;

/**
 * Where each data block's restarts lie, kept per table beside its decoded index, so that a read can
 * ask for the cache lines it is going to walk at the same time as the block's first line instead of
 * after it.
 *
 * <p>A seek into a cached block is a chain of dependent memory loads: the block's first line (its
 * pin and header), the restart words, then the restart entry and the lines up to the target. On a
 * block that is not in the CPU caches each is a full memory round trip. With the restart words and
 * positions copied here (filled once, when the block is read into its kept form), a read finds its
 * restart from the index's memory and touches the lines from that restart to the next one before it
 * pins the block; the loads are independent, so the CPU overlaps them with the first line's.
 *
 * <p>Hints never decide an answer: a read searches the block as it would without them, and a hint
 * that is missing, stale or about another array only costs the loads it asked for. So the arrays
 * are written and read without synchronization: racing fills of one block write the same values (a
 * table is immutable), and a reader that sees part of a fill touches the wrong lines at worst.
 */
final class RestartHints {
  /** Restarts hinted per block; a block with more has an evenly spaced subset hinted. */
  static final int PER_BLOCK = 8;

  /** Bytes touched past the next hinted restart when a scan goes on reading rows from there. */
  static final int SCAN_TAIL = 384;

  /** Bytes touched past the next hinted restart for a point read: the entry's value. */
  static final int GET_TAIL = 64;

  private static final int LINE = 64;

  // 52 bytes per data block in all.
  // Per block, PER_BLOCK slots: the first four bytes of each hinted restart's search word (the key
  // bytes after the block's restart-key common prefix), unsigned.
  private final int[] words;
  // Per block, PER_BLOCK + 1 slots: each hinted restart's position in the kept array, then where
  // the entries end.
  private final char[] positions;
  // Per block: how many restarts are hinted (0: none yet), and the common prefix length.
  private final byte[] counts;
  private final byte[] commons;

  RestartHints(int blocks) {
    words = new int[blocks * PER_BLOCK];
    positions = new char[blocks * (PER_BLOCK + 1)];
    counts = new byte[blocks];
    commons = new byte[blocks];
  }

  /**
   * Records the restarts of block {@code block} from {@code it}, which stands on its kept form;
   * does nothing when they are recorded already or cannot be (see {@link
   * BlockIterator#copyRestartHints}).
   */
  void fill(int block, BlockIterator it) {
    if (counts[block] != 0) {
      return;
    }
    int common = it.keptCommonLength();
    if (common > Byte.MAX_VALUE) {
      return;
    }
    int n = it.copyRestartHints(words, block * PER_BLOCK, positions, block * (PER_BLOCK + 1));
    if (n > 0) {
      commons[block] = (byte) common;
      counts[block] = (byte) n;
    }
  }

  /**
   * Loads one byte per cache line of {@code kept} (block {@code block}'s array, or whatever array
   * stands in its place) from the hinted restart below {@code target} to {@code tail} bytes past
   * the first hinted restart above it; returns their sum, which the caller must keep (loads whose
   * result is dropped may be dropped themselves).
   */
  int touch(int block, byte[] kept, byte[] target, int tail) {
    long range = range(block, target);
    if (range < 0) {
      return 0;
    }
    int end = (int) Math.min(kept.length, (int) range + (long) tail);
    int sum = 0;
    for (int p = (int) (range >>> 32); p < end; p += LINE) {
      sum += kept[p];
    }
    return sum;
  }

  /**
   * The kept-array bytes a read of {@code target} walks in block {@code block}, as {@code from <<
   * 32 | to}: from the last hinted restart whose word is below the target's to the first whose word
   * is above it (the entries' end when none is); -1 when the block has no hints. When the target
   * starts with the block's restart-key common prefix, the first entry at or after it starts in
   * that range.
   */
  long range(int block, byte[] target) {
    int n = counts[block];
    if (n <= 0) {
      return -1;
    }
    int common = commons[block];
    int t = (int) (DecodedIndex.prefix(target, common, Math.max(0, target.length - common)) >>> 32);
    int base = block * PER_BLOCK;
    int below = 0;
    while (below + 1 < n && Integer.compareUnsigned(words[base + below + 1], t) < 0) {
      below++;
    }
    int above = below + 1;
    while (above < n && Integer.compareUnsigned(words[base + above], t) <= 0) {
      above++;
    }
    int at = block * (PER_BLOCK + 1);
    return ((long) positions[at + below] << 32) | positions[at + above];
  }

  /** How many blocks have hints. */
  int hintedBlocks() {
    int n = 0;
    for (byte c : counts) {
      n += c != 0 ? 1 : 0;
    }
    return n;
  }
}
