package io.cobble.iterator;

/**
 * Where a {@link KvIterator}'s current entry lies, filled in one call ({@link
 * KvIterator#currentInto}, {@link KvIterator#nextInto}): the in-place key and value and the bytes
 * the key shares with the one before it, as the iterator's accessors give them one by one. A merge
 * over one source reads each row this way, so it makes one call through the interface per row
 * instead of one per accessor, calls that the compiler cannot inline once the merge has seen
 * memtable, table and level sources.
 */
public final class KvEntry {
  byte[] keyArray;
  int keyOffset;
  int keyLength;
  int sharedWithPrevious;
  byte[] valueArray;
  int valueOffset;
  int valueLength;

  /** Describes the current entry; the arrays are the iterator's own, valid until it moves. */
  public void set(
      byte[] keyArray,
      int keyOffset,
      int keyLength,
      int sharedWithPrevious,
      byte[] valueArray,
      int valueOffset,
      int valueLength) {
    this.keyArray = keyArray;
    this.keyOffset = keyOffset;
    this.keyLength = keyLength;
    this.sharedWithPrevious = sharedWithPrevious;
    this.valueArray = valueArray;
    this.valueOffset = valueOffset;
    this.valueLength = valueLength;
  }
}
