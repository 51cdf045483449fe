package io.cobble.sst;

import io.cobble.CobbleException;
import io.cobble.util.ByteWriter;
import io.cobble.util.Bytes;
import io.cobble.util.NewFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;

/**
 * Writes a sorted table: data blocks, then per partition an index block (last key of each data
 * block → handle) and a bloom filter block, then a top-level index (last key of each partition →
 * index handle [+ filter handle]), a properties block and the {@link Footer}. Without partitioning
 * there is exactly one partition.
 */
public final class TableBuilder implements AutoCloseable {
  private final Path path;
  private final TableOptions options;
  private final NewFile out;
  private long offset;
  private final BlockBuilder data;
  private final BlockBuilder index;
  private final BlockBuilder top;
  private long[] hashes = new long[1024];
  private int hashCount;
  // The last key added, copied: callers may hand in slices of buffers they reuse.
  private byte[] lastKey = new byte[64];
  private int lastKeyLen;
  private byte[] firstKey;
  private long entries;
  private int partitions;
  // Framed blocks are built here, reused from block to block.
  private byte[] framed = new byte[8192];
  private final ByteWriter handle = new ByteWriter(24);
  // Prefix filter: one hash per distinct prefix (keys arrive sorted, so equal prefixes are
  // adjacent).
  private long[] prefixHashes;
  private int prefixCount;
  // The metadata blocks written, for a reader of the finished file (see WrittenMetadata).
  private final WrittenMetadata written = new WrittenMetadata();

  public TableBuilder(Path path, TableOptions options) {
    this.path = path;
    this.options = options;
    try {
      this.out = new NewFile(path);
    } catch (IOException e) {
      throw new CobbleException("cannot create table " + path, e);
    }
    this.data = new BlockBuilder(options.restartInterval, options.dataBlockHash);
    this.index = new BlockBuilder(1);
    this.top = new BlockBuilder(1);
    this.prefixHashes = options.prefixLength > 0 ? new long[256] : null;
  }

  public Path path() {
    return path;
  }

  public void add(byte[] key, byte[] value) {
    add(key, 0, key.length, value, 0, value.length);
  }

  /**
   * As {@link #add(byte[], byte[])} with key and value given as slices, which the builder copies
   * and does not keep.
   */
  public void add(byte[] key, int keyOff, int keyLen, byte[] value, int valueOff, int valueLen) {
    if (prefixHashes != null) {
      addPrefix(key, keyOff, keyLen);
    }
    if (firstKey == null) {
      firstKey = Arrays.copyOfRange(key, keyOff, keyOff + keyLen);
    }
    if (lastKey.length < keyLen) {
      lastKey = new byte[Math.max(keyLen, lastKey.length * 2)];
    }
    System.arraycopy(key, keyOff, lastKey, 0, keyLen);
    lastKeyLen = keyLen;
    entries++;
    long hash = options.bloom || options.dataBlockHash ? BloomFilter.hash(key, keyOff, keyLen) : 0;
    data.add(key, keyOff, keyLen, value, valueOff, valueLen, hash);
    if (options.bloom) {
      if (hashCount == hashes.length) {
        hashes = BloomFilter.grow(hashes);
      }
      hashes[hashCount++] = hash;
    }
    if (data.estimatedSize() >= options.blockSize) {
      flushData();
    }
  }

  /** Records the key's prefix unless it is shorter than one or repeats the previous key's. */
  private void addPrefix(byte[] key, int keyOff, int keyLen) {
    int len = options.prefixLength;
    if (keyLen < len
        || (firstKey != null
            && lastKeyLen >= len
            && Bytes.compare(key, keyOff, len, lastKey, 0, len) == 0)) {
      return;
    }
    if (prefixCount == prefixHashes.length) {
      prefixHashes = BloomFilter.grow(prefixHashes);
    }
    prefixHashes[prefixCount++] = BloomFilter.hash(key, keyOff, len);
  }

  public long entries() {
    return entries;
  }

  /** Bytes written so far plus the open data block, used to cut output files. */
  public long estimatedSize() {
    return offset + data.estimatedSize();
  }

  private BlockHandle writeBlock(byte[] raw, boolean lz4) {
    return writeBlock(raw, raw.length, lz4);
  }

  /** Frames the first {@code rawLen} bytes of {@code raw} into the reused buffer and writes it. */
  private BlockHandle writeBlock(byte[] raw, int rawLen, boolean lz4) {
    int max = BlockCodec.maxFramedLength(rawLen);
    if (framed.length < max) {
      framed = new byte[Math.max(max, framed.length * 2)];
    }
    int length = BlockCodec.frame(raw, rawLen, lz4, framed);
    BlockHandle h = new BlockHandle(offset, length - BlockHandle.TRAILER_SIZE);
    try {
      out.write(framed, 0, length);
    } catch (IOException e) {
      throw new CobbleException("cannot write table " + path, e);
    }
    offset += length;
    return h;
  }

  /** Finishes {@code block} in place and writes it. */
  private BlockHandle writeBlock(BlockBuilder block, boolean lz4) {
    int length = block.finishInPlace();
    return writeBlock(block.buffer(), length, lz4);
  }

  /** Writes a metadata block, uncompressed, and keeps it (the builder's own copy) for a reader. */
  private BlockHandle writeMetadata(byte[] raw) {
    BlockHandle h = writeBlock(raw, false);
    written.add(h, raw);
    return h;
  }

  /** As {@link #writeMetadata(byte[])} for a block finished in a reused builder: kept as a copy. */
  private BlockHandle writeMetadata(BlockBuilder block) {
    int length = block.finishInPlace();
    BlockHandle h = writeBlock(block.buffer(), length, false);
    written.add(h, Arrays.copyOf(block.buffer(), length));
    return h;
  }

  private void flushData() {
    if (data.isEmpty()) {
      return;
    }
    BlockHandle h = writeBlock(data, options.lz4);
    data.reset();
    handle.reset();
    h.encode(handle);
    index.add(lastKey, 0, lastKeyLen, handle.array(), 0, handle.size(), 0);
    if (options.partitioned && index.estimatedSize() >= options.blockSize) {
      flushPartition();
    }
  }

  private void flushPartition() {
    if (index.isEmpty()) {
      return;
    }
    BlockHandle ih = writeMetadata(index);
    index.reset();
    ByteWriter w = handle;
    w.reset();
    w.writeVarInt(partitions);
    ih.encode(w);
    if (options.bloom) {
      BlockHandle fh = writeMetadata(BloomFilter.build(hashes, hashCount, options.bitsPerKey));
      hashCount = 0;
      fh.encode(w);
    }
    top.add(lastKey, 0, lastKeyLen, w.array(), 0, w.size(), 0);
    partitions++;
  }

  /** Finishes the file (fsynced) and returns its properties. */
  public TableProperties finish(
      int schemaId, long maxExpiry, long minMergeWriteTime, Map<Long, Long> vlogRefs) {
    if (entries == 0) {
      throw new IllegalStateException("empty table " + path);
    }
    flushData();
    flushPartition();
    BlockHandle prefixHandle = null;
    if (prefixHashes != null) {
      int bits = options.bloom ? options.bitsPerKey : 10;
      prefixHandle = writeMetadata(BloomFilter.build(prefixHashes, prefixCount, bits));
    }
    TableProperties props =
        new TableProperties(
            entries,
            firstKey,
            Arrays.copyOf(lastKey, lastKeyLen),
            schemaId,
            maxExpiry,
            minMergeWriteTime,
            vlogRefs);
    ByteWriter pw = new ByteWriter(128);
    props.encode(pw);
    if (prefixHandle != null) {
      // Format version 3: the prefix filter's length and handle follow the properties.
      pw.writeVarInt(options.prefixLength);
      prefixHandle.encode(pw);
    }
    BlockHandle propsHandle = writeMetadata(Arrays.copyOf(pw.array(), pw.size()));
    BlockHandle topHandle = writeMetadata(top);
    int flags =
        (options.bloom ? Footer.FLAG_BLOOM : 0)
            | (partitions > 1 ? Footer.FLAG_PARTITIONED : 0)
            | (options.dataBlockHash ? Footer.FLAG_DATA_BLOCK_HASH : 0)
            | (prefixHandle != null ? Footer.FLAG_PREFIX_FILTER : 0);
    Footer footer = new Footer(topHandle, propsHandle, flags);
    try {
      out.write(footer.encode());
      offset += Footer.SIZE;
      out.finish(options.sync);
    } catch (IOException e) {
      throw new CobbleException("cannot finish table " + path, e);
    }
    written.finish(footer);
    return props;
  }

  /**
   * The metadata of the finished file, for {@link Table#open(io.cobble.storage.DataFile, long,
   * long, io.cobble.cache.BlockCache, TableReadOptions, WrittenMetadata)}.
   */
  public WrittenMetadata written() {
    if (written.footer() == null) {
      throw new IllegalStateException("table not finished: " + path);
    }
    return written;
  }

  public long fileSize() {
    return offset;
  }

  /** Abandons an unfinished file. */
  @Override
  public void close() {
    out.abandon();
  }
}
