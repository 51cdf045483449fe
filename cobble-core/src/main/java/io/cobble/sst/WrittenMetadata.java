package io.cobble.sst;

import java.util.Arrays;

/**
 * The metadata a {@link TableBuilder} wrote (footer, properties, top-level index, index and filter
 * partitions, prefix filter), kept decoded so that a {@link Table} opened on the file just written
 * takes them from memory instead of reading back, faulting in and verifying what was written a
 * moment before. They are the very bytes framed into the file, so such a reader answers as one that
 * read them.
 */
public final class WrittenMetadata {
  // Blocks in file order, so by ascending offset.
  private long[] offsets = new long[8];
  private int[] sizes = new int[8];
  private byte[][] blocks = new byte[8][];
  private int count;
  private Footer footer;

  WrittenMetadata() {}

  /** Records the decoded block written at {@code h}; the builder must not change it afterwards. */
  void add(BlockHandle h, byte[] raw) {
    if (count == offsets.length) {
      offsets = Arrays.copyOf(offsets, count * 2);
      sizes = Arrays.copyOf(sizes, count * 2);
      blocks = Arrays.copyOf(blocks, count * 2);
    }
    offsets[count] = h.offset();
    sizes[count] = h.size();
    blocks[count] = raw;
    count++;
  }

  void finish(Footer footer) {
    this.footer = footer;
  }

  Footer footer() {
    return footer;
  }

  /** The decoded block written at {@code h}, or null when it is not one of the blocks kept. */
  byte[] block(BlockHandle h) {
    int i = Arrays.binarySearch(offsets, 0, count, h.offset());
    return i >= 0 && sizes[i] == h.size() ? blocks[i] : null;
  }
}
