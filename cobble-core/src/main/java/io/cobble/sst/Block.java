package io.cobble.sst;

import io.cobble.util.Bytes;

/** A decoded (uncompressed, checksum-verified) block; immutable and shared via the cache. */
public final class Block {
  private final byte[] data;
  private final int restartsOffset;
  private final int restartCount;

  public Block(byte[] data) {
    this.data = data;
    this.restartCount = restartCountOf(data);
    this.restartsOffset =
        restartsEnd(data, data.length, Bytes.getInt(data, data.length - 4)) - restartCount * 4;
  }

  /** The restart count of a decoded block; throws IllegalStateException if the trailer is bad. */
  static int restartCountOf(byte[] data) {
    return restartCountOf(data, data.length);
  }

  /** As {@link #restartCountOf(byte[])} for a block held in the first {@code length} bytes. */
  static int restartCountOf(byte[] data, int length) {
    if (length < 4) {
      throw new IllegalStateException("block too short: " + length + " bytes");
    }
    int trailer = Bytes.getInt(data, length - 4);
    int restartCount = trailer & ~DataBlockHash.FLAG;
    int end = restartsEnd(data, length, trailer);
    if (restartCount < 1
        || restartCount > end / 4
        || (end != length - 4 && restartCount > DataBlockHash.MAX_RESTARTS)) {
      throw new IllegalStateException("bad restart count " + restartCount);
    }
    return restartCount;
  }

  /**
   * Where the restart offsets of a block whose last int32 is {@code trailer} end: at the trailer,
   * or at the {@link DataBlockHash} buckets before it.
   */
  static int restartsEnd(byte[] data, int length, int trailer) {
    int buckets = DataBlockHash.bucketsOf(data, length, trailer);
    return buckets == 0 ? length - 4 : length - 6 - buckets;
  }

  byte[] data() {
    return data;
  }

  int restartsOffset() {
    return restartsOffset;
  }

  int restartCount() {
    return restartCount;
  }

  int restart(int i) {
    return Bytes.getInt(data, restartsOffset + i * 4);
  }

  public BlockIterator iterator() {
    return new BlockIterator(this);
  }
}
