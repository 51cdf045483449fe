package io.cobble.memtable;

/** Folds a newer row delta onto an older row of the same key (family taken from the key). */
@FunctionalInterface
public interface RowCombiner {
  byte[] combine(byte[] key, byte[] older, byte[] newer);

  /**
   * Whether the delta at {@code row[rowOff..rowOff + rowLen)} of a key beginning at {@code
   * key[keyOff]} leaves nothing of any older delta of that key, so a fold may start at it. False is
   * always safe: it only costs the fold.
   */
  default boolean replacesOlder(byte[] key, int keyOff, byte[] row, int rowOff, int rowLen) {
    return false;
  }
}
