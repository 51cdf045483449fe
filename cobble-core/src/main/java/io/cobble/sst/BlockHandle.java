package io.cobble.sst;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;

/** Location of a block in a table file: offset and payload size (trailer excluded). */
public final class BlockHandle {
  /** Compression type byte plus CRC32C after every block payload. */
  public static final int TRAILER_SIZE = 5;

  private final long offset;
  private final int size;

  public BlockHandle(long offset, int size) {
    this.offset = offset;
    this.size = size;
  }

  public long offset() {
    return offset;
  }

  public int size() {
    return size;
  }

  public void encode(ByteWriter w) {
    w.writeVarLong(offset);
    w.writeVarInt(size);
  }

  public static BlockHandle decode(ByteReader r) {
    return new BlockHandle(r.readVarLong(), r.readVarInt());
  }

  public byte[] encode() {
    ByteWriter w = new ByteWriter(16);
    encode(w);
    return w.toByteArray();
  }
}
