package io.cobble.sst;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.cache.BlockCache;
import io.cobble.iterator.KvIterator;
import io.cobble.storage.DataFile;
import io.cobble.storage.StorageInput;
import io.cobble.util.ByteReader;
import io.cobble.util.DirectIo;
import io.cobble.util.ValueSink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Reader of one table file. Thread-safe: all reads are positional. The top-level index (and, when
 * configured, the index and filter partitions) can be pinned in memory; other blocks go through the
 * shared {@link BlockCache}. Any checksum or decoding failure becomes a {@link CorruptionException}
 * naming this file and the block kind.
 *
 * <p>A local file is read with positional reads on a {@link FileChannel}. A file on remote storage
 * is read in place with ranged reads: opening it fetches the tail (footer, properties, top-level
 * index) in one request, and data blocks are fetched on demand through the block cache.
 */
public final class Table implements AutoCloseable {
  /** Bytes fetched from the end of a remote table at open: footer, properties and top index. */
  private static final int REMOTE_OPEN_TAIL = 4096;

  private final String name;
  private final Path localPath;
  private final long fileNumber;
  // Exactly one of channel (local file) and remote (file on remote storage) is set.
  private final FileChannel channel;
  private final StorageInput remote;
  // Block misses pread into a per-thread direct buffer: local files without direct I/O.
  private final boolean preadDirect;
  private final long fileSize;
  private final BlockCache cache;
  private final Footer footer;
  private final TableProperties properties;
  private final boolean bloom;
  private final boolean pinTop;
  private final boolean pinPartitions;
  // Decoded metadata kept outside the block cache; null until loaded (lazy) or when none is kept.
  private volatile Pinned pinned;
  private final DirectIo.Reader direct;
  // The end of a remote file, fetched once at open and dropped once the metadata is decoded.
  private byte[] openTail;
  private long openTailStart;

  /**
   * The top-level index and, when pinned, every index and filter partition; index blocks both as
   * blocks (for iterators) and decoded for point reads.
   */
  private static final class Pinned {
    final Block top;
    final DecodedIndex topDecoded;
    final byte[][] index;
    final DecodedIndex[] indexDecoded;
    final byte[][] filter;

    Pinned(Block top, byte[][] index, byte[][] filter) {
      this.top = top;
      this.topDecoded = new DecodedIndex(top);
      this.index = index;
      this.filter = filter;
      if (index == null) {
        indexDecoded = null;
      } else {
        indexDecoded = new DecodedIndex[index.length];
        for (int i = 0; i < index.length; i++) {
          indexDecoded[i] = new DecodedIndex(new Block(index[i]));
        }
      }
    }
  }

  private Table(
      DataFile file,
      long knownSize,
      long fileNumber,
      BlockCache cache,
      boolean pinTop,
      boolean pinPartitions,
      boolean lazy,
      DirectIo directIo) {
    this.name = file.toString();
    this.localPath = file.localPath();
    this.fileNumber = fileNumber;
    this.cache = cache;
    this.pinTop = pinTop;
    this.pinPartitions = pinPartitions;
    try {
      if (file.isLocal()) {
        this.direct = directIo == null ? null : directIo.open(localPath);
        this.channel = FileChannel.open(localPath, StandardOpenOption.READ);
        this.remote = null;
        this.fileSize = channel.size();
      } else {
        this.direct = null;
        this.channel = null;
        this.remote = file.openRemote(knownSize);
        this.fileSize = remote.length();
      }
    } catch (IOException e) {
      throw new CobbleException("cannot open table " + name, e);
    }
    this.preadDirect = direct == null && channel != null;
    try {
      if (fileSize < Footer.SIZE) {
        throw new CorruptionException(name, "file too short for a footer: " + fileSize + " bytes");
      }
      if (remote != null) {
        int tail = (int) Math.min(fileSize, REMOTE_OPEN_TAIL);
        byte[] bytes = new byte[tail];
        readRemote(bytes, tail, fileSize - tail);
        openTailStart = fileSize - tail;
        openTail = bytes;
      }
      byte[] fb = new byte[Footer.SIZE];
      readFully(fb, fileSize - Footer.SIZE);
      try {
        footer = Footer.decode(fb);
      } catch (IllegalStateException e) {
        throw new CorruptionException(name, "footer: " + e.getMessage());
      }
      bloom = (footer.flags() & Footer.FLAG_BLOOM) != 0;
      byte[] pb = readBlock(footer.properties(), "properties", false);
      properties = decodeProperties(pb);
      if (pinTop && !lazy) {
        pinned = loadPinned();
      }
    } catch (RuntimeException e) {
      closeQuietly();
      if (e instanceof CobbleException) {
        throw e;
      }
      throw new CorruptionException(name, "cannot decode table metadata: " + e, e);
    } finally {
      openTail = null;
    }
  }

  /**
   * Opens a table; {@code pinTop}/{@code pinPartitions} follow sst.pinned-metadata.*, and {@code
   * lazy} (sst.read-metadata-cache.mode) defers decoding that metadata to the first point read.
   * With a {@link DirectIo} (null = off) block reads bypass the page cache where the file system
   * allows.
   */
  public static Table open(
      Path path,
      long fileNumber,
      BlockCache cache,
      boolean pinTop,
      boolean pinPartitions,
      boolean lazy,
      DirectIo directIo) {
    return open(DataFile.local(path), -1, fileNumber, cache, pinTop, pinPartitions, lazy, directIo);
  }

  /**
   * Opens a local or remote table. {@code knownSize} (from the manifest, or -1) spares a remote
   * file the length request; direct I/O applies to local files only.
   */
  public static Table open(
      DataFile file,
      long knownSize,
      long fileNumber,
      BlockCache cache,
      boolean pinTop,
      boolean pinPartitions,
      boolean lazy,
      DirectIo directIo) {
    return new Table(file, knownSize, fileNumber, cache, pinTop, pinPartitions, lazy, directIo);
  }

  /** Reads and decodes the metadata this table keeps outside the block cache. */
  private Pinned loadPinned() {
    Block top = new Block(readBlock(footer.topIndex(), "top-level index", false));
    int parts = countEntries(top);
    if (!pinPartitions && parts != 1) {
      return new Pinned(top, null, null);
    }
    byte[][] index = new byte[parts][];
    byte[][] filter = bloom ? new byte[parts][] : null;
    BlockIterator it = top.iterator();
    int i = 0;
    for (it.seekToFirst(); it.valid(); it.next()) {
      ByteReader r = new ByteReader(it.value());
      r.readVarInt();
      index[i] = readBlock(BlockHandle.decode(r), "index partition", false);
      if (bloom) {
        filter[i] = readBlock(BlockHandle.decode(r), "filter partition", false);
      }
      i++;
    }
    return new Pinned(top, index, filter);
  }

  /** The kept metadata, decoding it on first use when lazy; null when nothing is kept. */
  private Pinned pinned() {
    Pinned p = pinned;
    if (p != null || !pinTop) {
      return p;
    }
    synchronized (this) {
      p = pinned;
      if (p == null) {
        try {
          p = loadPinned();
        } catch (CobbleException e) {
          throw e;
        } catch (RuntimeException e) {
          throw new CorruptionException(name, "cannot decode table metadata: " + e, e);
        }
        pinned = p;
      }
      return p;
    }
  }

  private TableProperties decodeProperties(byte[] pb) {
    try {
      return TableProperties.decode(new ByteReader(pb));
    } catch (IllegalStateException e) {
      throw new CorruptionException(name, "properties block: " + e.getMessage());
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

  /** The file's local path or storage URI, for messages. */
  public String name() {
    return name;
  }

  /** The local path; null for a file read in place on remote storage. */
  public Path localPath() {
    return localPath;
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
              name, "unexpected end of file reading " + len + " bytes at " + position);
        }
        return;
      } catch (IOException e) {
        throw new CobbleException("cannot read table " + name, e);
      }
    }
    readBuffered(dst, len, position);
  }

  /** Reads through the page cache (or one ranged read remotely): large sequential reads. */
  void readBuffered(byte[] dst, int len, long position) {
    if (remote != null) {
      readRemote(dst, len, position);
      return;
    }
    readBuffered(ByteBuffer.wrap(dst, 0, len), position);
  }

  /** One ranged read of a remote file, served from the tail fetched at open when it covers it. */
  private void readRemote(byte[] dst, int len, long position) {
    byte[] tail = openTail;
    if (tail != null && position >= openTailStart) {
      System.arraycopy(tail, (int) (position - openTailStart), dst, 0, len);
      return;
    }
    try {
      remote.readFully(position, dst, 0, len);
    } catch (IOException e) {
      throw new CobbleException("cannot read table " + name, e);
    }
  }

  private void checkHandle(long offset, int size, String kind) {
    if (offset < 0 || size < 0 || offset + size + 5 > fileSize - Footer.SIZE) {
      throw new CorruptionException(
          name, kind + " block handle out of range: offset " + offset + " size " + size);
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

  private static final ThreadLocal<ByteBuffer[]> DIRECT_SCRATCH =
      ThreadLocal.withInitial(() -> new ByteBuffer[] {ByteBuffer.allocateDirect(8 << 10)});

  /** A per-thread direct buffer with position 0 and limit {@code len} (at most SCRATCH_MAX). */
  private static ByteBuffer directScratch(int len) {
    ByteBuffer[] holder = DIRECT_SCRATCH.get();
    ByteBuffer b = holder[0];
    if (b.capacity() < len) {
      b = ByteBuffer.allocateDirect(Math.max(len, Math.min(SCRATCH_MAX, b.capacity() * 2)));
      holder[0] = b;
    }
    b.clear().limit(len);
    return b;
  }

  /** Fills {@code bb} (position to limit) from the file at {@code position}, via the page cache. */
  private void readBuffered(ByteBuffer bb, long position) {
    int len = bb.remaining();
    try {
      while (bb.hasRemaining()) {
        int n = channel.read(bb, position + bb.position());
        if (n < 0) {
          throw new CorruptionException(
              name, "unexpected end of file reading " + len + " bytes at " + position);
        }
      }
    } catch (IOException e) {
      throw new CobbleException("cannot read table " + name, e);
    }
  }

  /** Reads, verifies and decodes a block, through the cache when {@code useCache}. */
  byte[] readBlock(BlockHandle h, String kind, boolean useCache) {
    return readBlock(h.offset(), h.size(), kind, useCache);
  }

  private byte[] readBlock(long offset, int size, String kind, boolean useCache) {
    checkHandle(offset, size, kind);
    long key = BlockCache.key(fileNumber, offset);
    if (useCache && cache != null) {
      byte[] b = cache.get(key);
      if (b != null) {
        return b;
      }
    }
    int len = size + BlockHandle.TRAILER_SIZE;
    byte[] raw;
    if (preadDirect && len <= SCRATCH_MAX) {
      // Read straight into a per-thread direct buffer: a heap buffer would make the JDK read into
      // its own temporary direct buffer and copy; CRC and LZ4 run on the direct bytes.
      ByteBuffer framed = directScratch(len);
      readBuffered(framed, offset);
      try {
        raw = BlockCodec.unframe(framed, size);
      } catch (RuntimeException e) {
        throw new CorruptionException(
            name, kind + " block at offset " + offset + ": " + e.getMessage(), e);
      }
    } else {
      byte[] framed = scratch(len);
      readFully(framed, len, offset);
      raw =
          remote != null
              ? unframeRemote(framed, len, size, kind, offset)
              : unframe(framed, 0, size, kind, offset);
    }
    if (useCache && cache != null) {
      cache.put(key, raw);
    }
    return raw;
  }

  /**
   * Unframes a block read from remote storage. One that fails its checksum may be a damaged local
   * copy in a cache between: that copy is dropped and the block read once more; only a second
   * failure is corruption.
   */
  private byte[] unframeRemote(byte[] framed, int len, int size, String kind, long offset) {
    try {
      return BlockCodec.unframe(framed, 0, size);
    } catch (RuntimeException e) {
      if (!remote.dropCached(offset, len)) {
        throw new CorruptionException(
            name, kind + " block at offset " + offset + ": " + e.getMessage(), e);
      }
    }
    // The tail fetched at open may hold the damaged bytes as well.
    openTail = null;
    readFully(framed, len, offset);
    return unframe(framed, 0, size, kind, offset);
  }

  byte[] unframe(byte[] buf, int off, int size, String kind, long fileOffset) {
    try {
      return BlockCodec.unframe(buf, off, size);
    } catch (RuntimeException e) {
      throw new CorruptionException(
          name, kind + " block at offset " + fileOffset + ": " + e.getMessage(), e);
    }
  }

  Block topIndex() {
    Pinned p = pinned;
    return p != null
        ? p.top
        : block(readBlock(footer.topIndex(), "top-level index", true), "top-level index");
  }

  Block block(byte[] raw, String kind) {
    try {
      return new Block(raw);
    } catch (RuntimeException e) {
      throw new CorruptionException(name, kind + " block: " + e.getMessage(), e);
    }
  }

  Block indexPartition(int ordinal, BlockHandle h) {
    Pinned p = pinned;
    if (p != null && p.index != null) {
      return block(p.index[ordinal], "index partition");
    }
    return block(readBlock(h, "index partition", true), "index partition");
  }

  boolean hasBloom() {
    return bloom;
  }

  /** Per-thread cursor, reader and cache pin reused by {@link #get}: a get allocates nothing. */
  private static final class GetScratch {
    final BlockIterator it = new BlockIterator();
    final ByteReader reader = new ByteReader();
    final BlockCache.Pin pin = new BlockCache.Pin();
  }

  private static final ThreadLocal<GetScratch> GET_SCRATCH =
      ThreadLocal.withInitial(GetScratch::new);

  private void resetOnto(BlockIterator it, byte[] raw, int length, String kind) {
    try {
      it.reset(raw, length);
    } catch (RuntimeException e) {
      throw new CorruptionException(name, kind + " block: " + e.getMessage(), e);
    }
  }

  /**
   * The stored value of {@code key} (a copy), or null. {@code keyHash} is {@link BloomFilter#hash}.
   */
  public byte[] get(byte[] key, long keyHash) {
    byte[][] out = new byte[1][];
    return get(key, keyHash, (buf, off, len) -> out[0] = Arrays.copyOfRange(buf, off, off + len))
        ? out[0]
        : null;
  }

  /**
   * Hands the stored value of {@code key} to {@code sink} in place and returns true, or returns
   * false when the table has no such key. {@code keyHash} is {@link BloomFilter#hash}. Allocates
   * nothing when the metadata is pinned; exceptions of the sink pass through unchanged.
   */
  public boolean get(byte[] key, long keyHash, ValueSink sink) {
    GetScratch g = GET_SCRATCH.get();
    long dataOffset;
    int dataSize;
    try {
      BlockIterator it = g.it;
      ByteReader r = g.reader;
      Pinned p = pinned();
      if (p != null && p.indexDecoded != null) {
        // Pinned metadata: both index levels are searched in their decoded form.
        int top = p.topDecoded.lowerBound(key);
        if (top == p.topDecoded.count()) {
          return false;
        }
        p.topDecoded.value(top, r);
        int ordinal = r.readVarInt();
        if (bloom && !BloomFilter.mayContain(p.filter[ordinal], keyHash)) {
          return false;
        }
        DecodedIndex index = p.indexDecoded[ordinal];
        int entry = index.lowerBound(key);
        if (entry == index.count()) {
          return false;
        }
        index.value(entry, r);
        dataOffset = r.readVarLong();
        dataSize = r.readVarInt();
      } else {
        // One iterator walks the index levels in turn: each level's value is fully decoded into
        // locals before the iterator moves on to the next block.
        if (p != null) {
          it.reset(p.top);
        } else {
          byte[] top = readBlock(footer.topIndex(), "top-level index", true);
          resetOnto(it, top, top.length, "top-level index");
        }
        it.seek(key);
        if (!it.valid()) {
          return false;
        }
        it.valueReader(r);
        int ordinal = r.readVarInt();
        long indexOffset = r.readVarLong();
        int indexSize = r.readVarInt();
        if (bloom) {
          long filterOffset = r.readVarLong();
          int filterSize = r.readVarInt();
          if (!BloomFilter.mayContain(
              readBlock(filterOffset, filterSize, "filter partition", true), keyHash)) {
            return false;
          }
        }
        byte[] index = readBlock(indexOffset, indexSize, "index partition", true);
        resetOnto(it, index, index.length, "index partition");
        it.seek(key);
        if (!it.valid()) {
          return false;
        }
        it.valueReader(r);
        dataOffset = r.readVarLong();
        dataSize = r.readVarInt();
      }
    } catch (CobbleException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new CorruptionException(name, "cannot decode block entry: " + e, e);
    }
    return seekData(dataOffset, dataSize, key, sink, g);
  }

  /** Searches the data block at {@code offset} for {@code key}, pinned in the cache meanwhile. */
  private boolean seekData(long offset, int size, byte[] key, ValueSink sink, GetScratch g) {
    BlockIterator it = g.it;
    BlockCache.Pin pin = g.pin;
    byte[] data;
    int length;
    if (cache == null) {
      data = readBlock(offset, size, "data", false);
      length = data.length;
    } else {
      checkHandle(offset, size, "data");
      long cacheKey = BlockCache.key(fileNumber, offset);
      if (!cache.acquire(cacheKey, pin)) {
        readPinned(offset, size, cacheKey, pin);
      }
      data = pin.data();
      length = pin.length();
    }
    try {
      boolean found;
      try {
        resetOnto(it, data, length, "data");
        it.seek(key);
        found = it.valid() && it.compareKey(key) == 0;
      } catch (CobbleException e) {
        throw e;
      } catch (RuntimeException e) {
        throw new CorruptionException(name, "cannot decode block entry: " + e, e);
      }
      if (found) {
        it.valueTo(sink);
      }
      return found;
    } finally {
      if (cache != null) {
        cache.release(pin);
      }
    }
  }

  /**
   * Reads and verifies the data block at {@code offset}, decodes it into an array the cache hands
   * out (one it evicted, when it has one), caches it and pins it into {@code pin}.
   */
  private void readPinned(long offset, int size, long cacheKey, BlockCache.Pin pin) {
    int len = size + BlockHandle.TRAILER_SIZE;
    byte[] dst;
    int rawLen;
    try {
      if (preadDirect && len <= SCRATCH_MAX) {
        ByteBuffer framed = directScratch(len);
        readBuffered(framed, offset);
        rawLen = BlockCodec.verify(framed, size);
        dst = cache.allocate(cacheKey, rawLen);
        BlockCodec.decode(framed, size, dst, rawLen);
      } else {
        byte[] framed = scratch(len);
        readFully(framed, len, offset);
        rawLen =
            remote != null ? verifyRemote(framed, len, size, offset) : verifyFrame(framed, size);
        dst = cache.allocate(cacheKey, rawLen);
        BlockCodec.decode(framed, 0, size, dst, rawLen);
      }
    } catch (CobbleException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new CorruptionException(
          name, "data block at offset " + offset + ": " + e.getMessage(), e);
    }
    cache.insertPinned(cacheKey, dst, rawLen, pin);
  }

  private static int verifyFrame(byte[] framed, int size) {
    return BlockCodec.verify(framed, 0, size);
  }

  /** As {@link #unframeRemote}, verifying only: the decoded length of the (re-read) frame. */
  private int verifyRemote(byte[] framed, int len, int size, long offset) {
    try {
      return BlockCodec.verify(framed, 0, size);
    } catch (RuntimeException e) {
      if (!remote.dropCached(offset, len)) {
        throw e;
      }
    }
    openTail = null;
    readFully(framed, len, offset);
    return BlockCodec.verify(framed, 0, size);
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
      if (channel != null) {
        channel.close();
      } else {
        remote.close();
      }
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
