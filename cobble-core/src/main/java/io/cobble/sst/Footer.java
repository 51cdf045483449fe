package io.cobble.sst;

import io.cobble.util.ByteReader;
import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;
import io.cobble.util.Crc;

/**
 * Fixed-size trailer of every table: handles of the top-level index and the properties block,
 * format version, flags, magic and a CRC32C of the footer itself. Version 2 marks files whose data
 * blocks may carry a {@link DataBlockHash} index ({@link #FLAG_DATA_BLOCK_HASH}), so a build that
 * reads only version 1 refuses them by name instead of misreading their blocks; files without it
 * stay version 1. Version 3 marks files that carry a {@link PrefixFilter} ({@link
 * #FLAG_PREFIX_FILTER}): its length and handle follow the table's properties in the properties
 * block, which an older build would not look for, so it refuses them too.
 */
public final class Footer {
  public static final int SIZE = 44;
  public static final long MAGIC = 0x436f62626c655354L; // "CobbleST"
  public static final int FORMAT_VERSION = 3;
  public static final int FLAG_BLOOM = 1;
  public static final int FLAG_PARTITIONED = 2;
  public static final int FLAG_DATA_BLOCK_HASH = 4;
  public static final int FLAG_PREFIX_FILTER = 8;

  private final BlockHandle topIndex;
  private final BlockHandle properties;
  private final int flags;

  public Footer(BlockHandle topIndex, BlockHandle properties, int flags) {
    this.topIndex = topIndex;
    this.properties = properties;
    this.flags = flags;
  }

  public BlockHandle topIndex() {
    return topIndex;
  }

  public BlockHandle properties() {
    return properties;
  }

  public int flags() {
    return flags;
  }

  public byte[] encode() {
    ByteWriter w = new ByteWriter(SIZE);
    w.writeLong(topIndex.offset());
    w.writeInt(topIndex.size());
    w.writeLong(properties.offset());
    w.writeInt(properties.size());
    w.writeInt(versionOf(flags));
    w.writeInt(flags);
    w.writeLong(MAGIC);
    w.writeInt(Crc.crc32c(w.array(), 0, w.size()));
    return w.toByteArray();
  }

  /** The oldest format version that can hold a file with {@code flags}. */
  static int versionOf(int flags) {
    if ((flags & FLAG_PREFIX_FILTER) != 0) {
      return 3;
    }
    return (flags & FLAG_DATA_BLOCK_HASH) != 0 ? 2 : 1;
  }

  /** Decodes and verifies; returns a message describing the problem via exception. */
  public static Footer decode(byte[] b) {
    if (b.length != SIZE) {
      throw new IllegalStateException("footer has " + b.length + " bytes, expected " + SIZE);
    }
    if (Bytes.getLong(b, SIZE - 12) != MAGIC) {
      throw new IllegalStateException("bad table magic (not a Cobble SST or footer damaged)");
    }
    if (Crc.crc32c(b, 0, SIZE - 4) != Bytes.getInt(b, SIZE - 4)) {
      throw new IllegalStateException("footer checksum mismatch");
    }
    ByteReader r = new ByteReader(b);
    BlockHandle top = new BlockHandle(r.readLong(), r.readInt());
    BlockHandle props = new BlockHandle(r.readLong(), r.readInt());
    int version = r.readInt();
    if (version < 1 || version > FORMAT_VERSION) {
      throw new IllegalStateException(
          "unsupported table format version "
              + version
              + " (this build reads 1 to "
              + FORMAT_VERSION
              + ")");
    }
    return new Footer(top, props, r.readInt());
  }
}
