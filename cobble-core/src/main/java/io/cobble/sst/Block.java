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
    this.restartsOffset = data.length - 4 - restartCount * 4;
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
    int restartCount = Bytes.getInt(data, length - 4);
    if (restartCount < 1 || length - 4 - restartCount * 4 < 0) {
      throw new IllegalStateException("bad restart count " + restartCount);
    }
    return restartCount;
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
