package io.cobble.iterator;

/**
 * A data block as a compaction read it: its frame as stored (payload and trailer, checksum
 * verified) and its decoded entries. A compaction whose merge leaves every row of the block as it
 * is writes the frame into its output instead of encoding and compressing the rows again. A view
 * into the reading cursor's buffers, valid until the cursor moves.
 */
public interface FramedBlock {
  /** The array holding the block's last key, its first {@link #lastKeyLength()} bytes. */
  byte[] lastKey();

  int lastKeyLength();

  /** The block's entries from the first; one cursor per block, reset by every call. */
  KvIterator rows();

  /** The array holding the frame from {@link #frameOffset()}, {@link #frameLength()} bytes. */
  byte[] frame();

  int frameOffset();

  /** Payload and trailer. */
  int frameLength();

  /** Whether the payload is LZ4-compressed. */
  boolean compressed();

  /** Whether its table declares data blocks that may carry a hash index (a footer flag). */
  boolean dataBlockHash();
}
