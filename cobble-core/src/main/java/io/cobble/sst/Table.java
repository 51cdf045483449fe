package io.cobble.sst;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.cache.BlockCache;
import io.cobble.iterator.KvIterator;
import io.cobble.util.ByteReader;
import io.cobble.util.DirectIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Reader of one table file. Thread-safe: all reads are positional. The top-level index (and, when
 * configured, the index and filter partitions) can be pinned in memory; other blocks go through the
 * shared {@link BlockCache}. Any checksum or decoding failure becomes a {@link CorruptionException}
 * naming this file and the block kind.
 */
public final class Table implements AutoCloseable {
  private final Path path;
  private final long fileNumber;
  private final FileChannel channel;
  private final long fileSize;
  private final BlockCache cache;
  private final Footer footer;
  private final TableProperties properties;
  private final boolean bloom;
  private final Block pinnedTop;
  private final byte[][] pinnedIndex;
  private final byte[][] pinnedFilter;
  private final DirectIo.Reader direct;

  private Table(
      Path path,
      long fileNumber,
      BlockCache cache,
      boolean pinTop,
      boolean pinPartitions,
      DirectIo directIo) {
    this.path = path;
    this.fileNumber = fileNumber;
    this.cache = cache;
    this.direct = directIo == null ? null : directIo.open(path);
    try {
      this.channel = FileChannel.open(path, StandardOpenOption.READ);
      this.fileSize = channel.size();
    } catch (IOException e) {
      throw new CobbleException("cannot open table " + path, e);
    }
    try {
      if (fileSize < Footer.SIZE) {
        throw new CorruptionException(path, "file too short for a footer: " + fileSize + " bytes");
      }
      byte[] fb = new byte[Footer.SIZE];
      readFully(fb, fileSize - Footer.SIZE);
      try {
        footer = Footer.decode(fb);
      } catch (IllegalStateException e) {
        throw new CorruptionException(path, "footer: " + e.getMessage());
      }
      bloom = (footer.flags() & Footer.FLAG_BLOOM) != 0;
      byte[] pb = readBlock(footer.properties(), "properties", false);
      properties = decodeProperties(pb);
      Block top = new Block(readBlock(footer.topIndex(), "top-level index", false));
      int parts = countEntries(top);
      boolean single = parts == 1;
      pinnedTop = pinTop ? top : null;
      if (pinTop && (pinPartitions || single)) {
        pinnedIndex = new byte[parts][];
        pinnedFilter = bloom ? new byte[parts][] : null;
        BlockIterator it = top.iterator();
        int i = 0;
        for (it.seekToFirst(); it.valid(); it.next()) {
          ByteReader r = new ByteReader(it.value());
          r.readVarInt();
          pinnedIndex[i] = readBlock(BlockHandle.decode(r), "index partition", false);
          if (bloom) {
            pinnedFilter[i] = readBlock(BlockHandle.decode(r), "filter partition", false);
          }
          i++;
        }
      } else {
        pinnedIndex = null;
        pinnedFilter = null;
      }
    } catch (RuntimeException e) {
      closeQuietly();
      if (e instanceof CobbleException) {
        throw e;
      }
      throw new CorruptionException(path, "cannot decode table metadata: " + e, e);
    }
  }

  /**
   * Opens a table; {@code pinTop}/{@code pinPartitions} follow sst.pinned-metadata.*. With a {@link
   * DirectIo} (null = off) block reads bypass the page cache where the file system allows.
   */
  public static Table open(
      Path path,
      long fileNumber,
      BlockCache cache,
      boolean pinTop,
      boolean pinPartitions,
      DirectIo directIo) {
    return new Table(path, fileNumber, cache, pinTop, pinPartitions, directIo);
  }

  private TableProperties decodeProperties(byte[] pb) {
    try {
      return TableProperties.decode(new ByteReader(pb));
    } catch (IllegalStateException e) {
      throw new CorruptionException(path, "properties block: " + e.getMessage());
    }
  }

  private static int countEntries(Block b) {
    int n = 0;
    BlockIterator it = b.iterator();
    for (it.seekToFirst(); it.valid(); it.next()) {
      n++;
    }
    return n;
  }

  public Path path() {
    return path;
  }

  public long fileNumber() {
    return fileNumber;
  }

  public long fileSize() {
    return fileSize;
  }

  public TableProperties properties() {
    return properties;
  }

  void readFully(byte[] dst, long position) {
    readFully(dst, dst.length, position);
  }

  void readFully(byte[] dst, int len, long position) {
    if (direct != null) {
      try {
        if (!direct.read(dst, len, position)) {
          throw new CorruptionException(
              path, "unexpected end of file reading " + len + " bytes at " + position);
        }
        return;
      } catch (IOException e) {
        throw new CobbleException("cannot read table " + path, e);
      }
    }
    readBuffered(dst, len, position);
  }

  /** Reads through the page cache: used for large sequential compaction reads. */
  void readBuffered(byte[] dst, int len, long position) {
    ByteBuffer bb = ByteBuffer.wrap(dst, 0, len);
    try {
      while (bb.hasRemaining()) {
        int n = channel.read(bb, position + bb.position());
        if (n < 0) {
          throw new CorruptionException(
              path, "unexpected end of file reading " + len + " bytes at " + position);
        }
      }
    } catch (IOException e) {
      throw new CobbleException("cannot read table " + path, e);
    }
  }

  private void checkHandle(BlockHandle h, String kind) {
    if (h.offset() < 0 || h.size() < 0 || h.offset() + h.size() + 5 > fileSize - Footer.SIZE) {
      throw new CorruptionException(
          path, kind + " block handle out of range: offset " + h.offset() + " size " + h.size());
    }
  }

  /** Largest frame read into the per-thread scratch buffer; bigger ones get their own array. */
  private static final int SCRATCH_MAX = 256 << 10;

  private static final ThreadLocal<byte[][]> SCRATCH =
      ThreadLocal.withInitial(() -> new byte[][] {new byte[8 << 10]});

  /**
   * A per-thread buffer of at least {@code len} bytes for a framed block. The decoded block never
   * aliases it ({@link BlockCodec#unframe} always returns a fresh array), so it is reused by the
   * next read on this thread.
   */
  private static byte[] scratch(int len) {
    if (len > SCRATCH_MAX) {
      return new byte[len];
    }
    byte[][] holder = SCRATCH.get();
    byte[] b = holder[0];
    if (b.length < len) {
      b = new byte[Math.max(len, Math.min(SCRATCH_MAX, b.length * 2))];
      holder[0] = b;
    }
    return b;
  }

  /** Reads, verifies and decodes a block, through the cache when {@code useCache}. */
  byte[] readBlock(BlockHandle h, String kind, boolean useCache) {
    checkHandle(h, kind);
    long key = BlockCache.key(fileNumber, h.offset());
    if (useCache && cache != null) {
      byte[] b = cache.get(key);
      if (b != null) {
        return b;
      }
    }
    int len = h.size() + BlockHandle.TRAILER_SIZE;
    byte[] framed = scratch(len);
    readFully(framed, len, h.offset());
    byte[] raw = unframe(framed, 0, h.size(), kind, h.offset());
    if (useCache && cache != null) {
      cache.put(key, raw);
    }
    return raw;
  }

  byte[] unframe(byte[] buf, int off, int size, String kind, long fileOffset) {
    try {
      return BlockCodec.unframe(buf, off, size);
    } catch (RuntimeException e) {
      throw new CorruptionException(
          path, kind + " block at offset " + fileOffset + ": " + e.getMessage(), e);
    }
  }

  Block topIndex() {
    return pinnedTop != null
        ? pinnedTop
        : block(readBlock(footer.topIndex(), "top-level index", true), "top-level index");
  }

  Block block(byte[] raw, String kind) {
    try {
      return new Block(raw);
    } catch (RuntimeException e) {
      throw new CorruptionException(path, kind + " block: " + e.getMessage(), e);
    }
  }

  Block indexPartition(int ordinal, BlockHandle h) {
    if (pinnedIndex != null) {
      return block(pinnedIndex[ordinal], "index partition");
    }
    return block(readBlock(h, "index partition", true), "index partition");
  }

  private byte[] filterPartition(int ordinal, BlockHandle h) {
    if (pinnedFilter != null) {
      return pinnedFilter[ordinal];
    }
    return readBlock(h, "filter partition", true);
  }

  boolean hasBloom() {
    return bloom;
  }

  /** The stored value of {@code key}, or null. {@code keyHash} is {@link BloomFilter#hash}. */
  public byte[] get(byte[] key, long keyHash) {
    try {
      BlockIterator top = topIndex().iterator();
      top.seek(key);
      if (!top.valid()) {
        return null;
      }
      ByteReader r = top.valueReader(new ByteReader());
      int ordinal = r.readVarInt();
      BlockHandle ih = BlockHandle.decode(r);
      if (bloom) {
        BlockHandle fh = BlockHandle.decode(r);
        if (!BloomFilter.mayContain(filterPartition(ordinal, fh), keyHash)) {
          return null;
        }
      }
      BlockIterator idx = indexPartition(ordinal, ih).iterator();
      idx.seek(key);
      if (!idx.valid()) {
        return null;
      }
      BlockHandle dh = BlockHandle.decode(idx.valueReader(r));
      BlockIterator data = block(readBlock(dh, "data", true), "data").iterator();
      data.seek(key);
      if (data.valid() && data.compareKey(key) == 0) {
        return data.value();
      }
      return null;
    } catch (CobbleException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new CorruptionException(path, "cannot decode block entry: " + e, e);
    }
  }

  /**
   * Iterator over all entries. {@code readAheadBytes > 0} reads data blocks sequentially in chunks
   * of that size and bypasses the cache (compaction); 0 uses the cache (user scans).
   */
  public KvIterator iterator(int readAheadBytes) {
    return new TableIterator(this, readAheadBytes);
  }

  private void closeQuietly() {
    try {
      if (direct != null) {
        direct.close();
      }
      channel.close();
    } catch (IOException ignored) {
      // Nothing useful to do; the descriptor is released either way.
    }
  }

  @Override
  public void close() {
    closeQuietly();
    if (cache != null) {
      cache.evictFile(fileNumber);
    }
  }
}
