package io.cobble.sst;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.cache.BlockCache;
import io.cobble.cache.BlockRefs;
import io.cobble.iterator.KvIterator;
import io.cobble.storage.DataFile;
import io.cobble.util.ByteReader;
import io.cobble.util.ValueSink;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reader of one table file. Thread-safe. Its bytes come from a {@link BlockSource} (a local file,
 * with or without direct I/O, or ranged reads of a file on remote storage), its index and filter
 * metadata from {@link PinnedMetadata} when pinned, and other blocks through the shared {@link
 * BlockCache}. Any checksum or decoding failure becomes a {@link CorruptionException} naming this
 * file and the block kind.
 */
public final class Table implements AutoCloseable {
  /** Bytes fetched from the end of a remote table at open: footer, properties and top index. */
  private static final int REMOTE_OPEN_TAIL = 4096;

  /** Largest frame read into the per-thread heap buffer; bigger ones get their own array. */
  private static final int SCRATCH_MAX = 256 << 10;

  private static final ThreadLocal<Frame> FRAMES = ThreadLocal.withInitial(Frame::new);

  private final String name;
  private final long fileNumber;
  private final BlockSource source;
  private final long fileSize;
  private final BlockCache cache;
  private final Footer footer;
  private final TableProperties properties;
  private final boolean bloom;
  private final PinnedMetadata metadata;
  // Null when the file has no prefix filter (format version 1 or 2, or written without one).
  private final PrefixFilter prefixFilter;
  // Who holds the table open: the opener, plus each retain(); the last close closes it.
  private final AtomicInteger holders = new AtomicInteger(1);
  // Run once, after the last holder closed the table; null when nobody is told.
  private volatile Runnable afterLastClose;

  private Table(
      DataFile file,
      long knownSize,
      long fileNumber,
      BlockCache cache,
      TableReadOptions options,
      WrittenMetadata written) {
    this.fileNumber = fileNumber;
    this.cache = cache;
    this.source = BlockSource.open(file, knownSize, options.directIo(), options.mmapReads());
    this.name = source.name();
    this.fileSize = source.size();
    try {
      if (fileSize < Footer.SIZE) {
        throw new CorruptionException(name, "file too short for a footer: " + fileSize + " bytes");
      }
      PinnedMetadata.BlockReader fromFile = (h, kind) -> readBlock(h, kind, false);
      PinnedMetadata.BlockReader atOpen = fromFile;
      if (written != null) {
        footer = written.footer();
        atOpen =
            (h, kind) -> {
              byte[] b = written.block(h);
              return b != null ? b : readBlock(h, kind, false);
            };
      } else {
        source.holdTail(REMOTE_OPEN_TAIL);
        footer = readFooter();
      }
      bloom = (footer.flags() & Footer.FLAG_BLOOM) != 0;
      ByteReader props = new ByteReader(atOpen.read(footer.properties(), "properties"));
      properties = decodeProperties(props);
      prefixFilter =
          (footer.flags() & Footer.FLAG_PREFIX_FILTER) != 0
              ? readPrefixFilter(props, atOpen)
              : null;
      metadata =
          new PinnedMetadata(
              name,
              footer,
              bloom,
              options,
              fromFile,
              atOpen,
              options.residentBlocks() && cache != null
                  ? blocks -> new ResidentBlocks(blocks, cache, fileSize)
                  : null,
              !options.residentBlocks() && cache != null
                  ? blocks -> new BlockRefs(blocks, fileNumber, cache)
                  : null);
    } catch (RuntimeException e) {
      closeQuietly();
      if (e instanceof CobbleException) {
        throw e;
      }
      throw new CorruptionException(name, "cannot decode table metadata: " + e, e);
    } finally {
      source.releaseTail();
    }
  }

  private Footer readFooter() {
    byte[] fb = new byte[Footer.SIZE];
    source.readFully(fb, fb.length, fileSize - Footer.SIZE);
    try {
      return Footer.decode(fb);
    } catch (IllegalStateException e) {
      throw new CorruptionException(name, "footer: " + e.getMessage());
    }
  }

  /** Opens a local table. */
  public static Table open(Path path, long fileNumber, BlockCache cache, TableReadOptions options) {
    return open(DataFile.local(path), -1, fileNumber, cache, options);
  }

  /**
   * Opens a local or remote table. {@code knownSize} (from the manifest, or -1) spares a remote
   * file the length request; direct I/O applies to local files only.
   */
  public static Table open(
      DataFile file, long knownSize, long fileNumber, BlockCache cache, TableReadOptions options) {
    return new Table(file, knownSize, fileNumber, cache, options, null);
  }

  /**
   * As {@link #open(DataFile, long, long, BlockCache, TableReadOptions)} for the file a {@link
   * TableBuilder} just finished, with its {@link TableBuilder#written()}: the footer and the
   * metadata blocks read at open come from there instead of the file. Lazily loaded metadata is
   * read from the file when first used, so the table does not keep {@code written}.
   */
  public static Table open(
      DataFile file,
      long knownSize,
      long fileNumber,
      BlockCache cache,
      TableReadOptions options,
      WrittenMetadata written) {
    return new Table(file, knownSize, fileNumber, cache, options, written);
  }

  private TableProperties decodeProperties(ByteReader pb) {
    try {
      return TableProperties.decode(pb);
    } catch (IllegalStateException e) {
      throw new CorruptionException(name, "properties block: " + e.getMessage());
    }
  }

  /**
   * Reads the prefix filter named after the properties: kept in memory from open, as a scan
   * consults it before anything else of the table (one bit array, about 10 bits per prefix).
   */
  private PrefixFilter readPrefixFilter(ByteReader props, PinnedMetadata.BlockReader reader) {
    int length;
    BlockHandle handle;
    try {
      length = props.readVarInt();
      handle = BlockHandle.decode(props);
    } catch (RuntimeException e) {
      throw new CorruptionException(name, "properties block: no prefix filter handle: " + e);
    }
    if (length < 1) {
      throw new CorruptionException(name, "properties block: prefix filter length " + length);
    }
    return new PrefixFilter(length, reader.read(handle, "prefix filter"));
  }

  /** Loads the pinned metadata now if it is kept and not loaded yet (lazy or deferred open). */
  public void loadMetadata() {
    metadata.get();
  }

  /** The file's local path or storage URI, for messages. */
  public String name() {
    return name;
  }

  /** Where this table's bytes come from. */
  BlockSource source() {
    return source;
  }

  /** The local path; null for a file read in place on remote storage. */
  public Path localPath() {
    return source.localPath();
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

  /** A large sequential read through the page cache (or one ranged read remotely). */
  void readSequential(byte[] dst, int len, long position) {
    source.readSequential(dst, len, position);
  }

  private void checkHandle(long offset, int size, String kind) {
    if (offset < 0 || size < 0 || offset + size + 5 > fileSize - Footer.SIZE) {
      throw new CorruptionException(
          name, kind + " block handle out of range: offset " + offset + " size " + size);
    }
  }

  /**
   * One thread's framed block between reading and decoding: in the source's direct buffer or in a
   * reused heap array, with its verified decoded length.
   */
  private static final class Frame {
    // The frame: in the source's direct buffer, or else in a heap array.
    ByteBuffer direct;
    int directBase;
    byte[] heap;
    int rawLength;
    private byte[] scratch = new byte[8 << 10];
    private byte[] decoded = new byte[8 << 10];

    /** A heap array of at least {@code len} bytes: the reused one up to SCRATCH_MAX. */
    byte[] heap(int len) {
      return len > SCRATCH_MAX ? new byte[len] : (scratch = atLeast(scratch, len));
    }

    /** As {@link #heap} for a block to decode the frame into, a second reused array. */
    byte[] decoded(int len) {
      return len > SCRATCH_MAX ? new byte[len] : (decoded = atLeast(decoded, len));
    }

    private static byte[] atLeast(byte[] array, int len) {
      return array.length >= len
          ? array
          : new byte[Math.max(len, Math.min(SCRATCH_MAX, array.length * 2))];
    }
  }

  /**
   * Reads and verifies the framed block at {@code offset} into this thread's {@link Frame}. A block
   * from remote storage that fails its checksum may be a damaged copy in a cache between: that copy
   * is dropped and the block read once more; only a second failure is corruption. A frame in a
   * direct buffer must be {@link #doneFrame done} with once decoded (a mapped table counts it).
   */
  private Frame readFrame(long offset, int size, String kind) {
    MemoryOnlyReads.checkMayReadStorage();
    Frame f = FRAMES.get();
    int len = size + BlockHandle.TRAILER_SIZE;
    f.direct = source.readDirect(len, offset);
    if (f.direct != null) {
      f.directBase = f.direct.position();
      try {
        f.rawLength = BlockCodec.verify(f.direct, f.directBase, size);
      } catch (RuntimeException e) {
        doneFrame(f);
        throw corrupt(kind, offset, e);
      }
      return f;
    }
    byte[] framed = f.heap(len);
    f.heap = framed;
    source.readFully(framed, len, offset);
    try {
      f.rawLength = BlockCodec.verify(framed, 0, size);
      return f;
    } catch (RuntimeException e) {
      if (!source.dropCached(offset, len)) {
        throw corrupt(kind, offset, e);
      }
    }
    source.readFully(framed, len, offset);
    try {
      f.rawLength = BlockCodec.verify(framed, 0, size);
    } catch (RuntimeException e) {
      throw corrupt(kind, offset, e);
    }
    return f;
  }

  /** Ends the use of a frame {@link #readFrame} left in a direct buffer. */
  private void doneFrame(Frame f) {
    if (f.direct != null) {
      f.direct = null;
      source.doneDirect();
    }
  }

  /** Decodes the verified frame into the first {@code f.rawLength} bytes of {@code dst}. */
  private void decode(Frame f, long offset, int size, String kind, byte[] dst) {
    try {
      if (f.direct != null) {
        BlockCodec.decode(f.direct, f.directBase, size, dst, f.rawLength);
      } else {
        BlockCodec.decode(f.heap, 0, size, dst, f.rawLength);
      }
    } catch (RuntimeException e) {
      throw corrupt(kind, offset, e);
    }
  }

  private CorruptionException corrupt(String kind, long offset, RuntimeException e) {
    return new CorruptionException(
        name, kind + " block at offset " + offset + ": " + e.getMessage(), e);
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
    Frame f = readFrame(offset, size, kind);
    byte[] raw;
    try {
      raw = new byte[f.rawLength];
      decode(f, offset, size, kind, raw);
    } finally {
      doneFrame(f);
    }
    if (useCache && cache != null) {
      cache.put(key, raw);
    }
    return raw;
  }

  /**
   * Verifies a block framed at {@code off} of {@code buf} (a read-ahead chunk) and returns its
   * decoded length.
   */
  int verifyFramed(byte[] buf, int off, int size, String kind, long fileOffset) {
    try {
      return BlockCodec.verify(buf, off, size);
    } catch (RuntimeException e) {
      throw corrupt(kind, fileOffset, e);
    }
  }

  /**
   * Decodes a block {@link #verifyFramed} accepted into the first {@code rawLen} bytes of {@code
   * dst}, so a sequential reader can reuse one array for every block.
   */
  void decodeFramed(
      byte[] buf, int off, int size, byte[] dst, int rawLen, String kind, long fileOffset) {
    try {
      BlockCodec.decode(buf, off, size, dst, rawLen);
    } catch (RuntimeException e) {
      throw corrupt(kind, fileOffset, e);
    }
  }

  /**
   * Whether this table may hold a key in {@code [lo, hi)}, by its {@link PrefixFilter}: true
   * without one, or when the range spans more than one prefix.
   */
  public boolean mayHoldRange(byte[] lo, byte[] hi) {
    return prefixFilter == null || prefixFilter.mayHold(lo, hi);
  }

  /** The prefix filter's length in key bytes, 0 when the table has none. */
  public int prefixFilterLength() {
    return prefixFilter == null ? 0 : prefixFilter.length();
  }

  boolean hasBloom() {
    return bloom;
  }

  /**
   * The block cursor, reader and cache pin a point read reuses, so a get allocates nothing. One per
   * reading thread: a reader that holds its own (as a shard's point reader does) spares each table
   * probe a thread-local lookup; {@link #get(byte[], long, ValueSink)} uses a thread-local one.
   */
  public static final class GetScratch {
    final BlockIterator it = new BlockIterator();
    final ByteReader reader = new ByteReader();
    final BlockCache.Pin pin = new BlockCache.Pin();
    private final FilterUse bottomFilter = new FilterUse();
    // What RestartHints.touch loads is summed here, so the loads are kept.
    int touched;
    private boolean bottom;

    /**
     * Marks the next gets as gets of a tree's bottom level (or not): their bloom probes are then
     * judged by this thread's use of bottom-level filters ({@link FilterUse}) and skipped while
     * they rule out almost nothing, as when every key read has a row there. Gets of other levels
     * always probe: a level-0 file holds only one flush's keys.
     */
    public void bottomLevel(boolean bottom) {
      this.bottom = bottom;
    }

    /** Whether this get should probe its table's bloom filter. */
    boolean probeFilter() {
      return !bottom || bottomFilter.shouldProbe();
    }

    /**
     * Whether a probe that answered {@code may} rules the key out; records the answer when the get
     * is judged.
     */
    boolean ruledOut(boolean may) {
      if (bottom) {
        bottomFilter.record(!may);
      }
      return !may;
    }
  }

  private static final ThreadLocal<GetScratch> GET_SCRATCH =
      ThreadLocal.withInitial(GetScratch::new);

  void resetOnto(BlockIterator it, byte[] raw, int length, String kind) {
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
    return get(key, keyHash, sink, GET_SCRATCH.get());
  }

  /** As {@link #get(byte[], long, ValueSink)} with the calling thread's own {@code g}. */
  public boolean get(byte[] key, long keyHash, ValueSink sink, GetScratch g) {
    // The data block's handle, read from the index only when the block is not kept.
    long dataOffset = 0;
    int dataSize = 0;
    ResidentBlocks resident = null;
    BlockRefs refs = null;
    int block = 0;
    byte[] kept = null;
    byte[] cached = null;
    RestartHints hints = null;
    try {
      BlockIterator it = g.it;
      ByteReader r = g.reader;
      PinnedMetadata.Blocks p = metadata.get();
      if (p != null && p.indexDecoded != null) {
        // Pinned metadata: both index levels are searched in their decoded form.
        int top = p.topDecoded.lowerBound(key);
        if (top == p.topDecoded.count()) {
          return false;
        }
        int ordinal = p.topDecoded.ordinal(top);
        if (bloom
            && g.probeFilter()
            && g.ruledOut(
                BloomFilter.mayContain(p.filter[ordinal], p.filterTrailer[ordinal], keyHash))) {
          return false;
        }
        DecodedIndex index = p.indexDecoded[ordinal];
        int entry = index.lowerBound(key);
        if (entry == index.count()) {
          return false;
        }
        resident = p.resident;
        refs = p.refs;
        hints = p.hints;
        block = p.firstBlock[ordinal] + entry;
        if (resident != null) {
          kept = resident.get(block);
          if (kept != null) {
            g.touched += hints.touch(block, kept, key, RestartHints.GET_TAIL);
          }
        } else if (refs != null) {
          byte[] ahead = refs.peek(block);
          if (ahead != null) {
            g.touched += hints.touch(block, ahead, key, RestartHints.GET_TAIL);
          }
          cached = refs.pin(block);
        }
        if (kept == null && cached == null) {
          dataOffset = index.dataOffset(entry);
          dataSize = index.dataSize(entry);
        }
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
          if (g.probeFilter()
              && g.ruledOut(
                  BloomFilter.mayContain(
                      readBlock(filterOffset, filterSize, "filter partition", true), keyHash))) {
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
    if (cached != null) {
      try {
        return searchKept(g.it, cached, BlockCache.cachedLength(cached), key, keyHash, sink);
      } finally {
        BlockRefs.unpin(cached);
      }
    }
    if (kept != null) {
      return searchKept(g.it, kept, kept.length, key, keyHash, sink);
    }
    if (resident != null && resident.mayKeep()) {
      byte[] read = keptForm(dataOffset, dataSize);
      byte[] now = resident.keep(block, read);
      // Not kept (no room): this read still searches the bytes it read.
      byte[] search = now != null ? now : read;
      resetOntoKept(g.it, search, search.length);
      if (now != null) {
        hints.fill(block, g.it);
      }
      return searchBlock(g.it, key, keyHash, sink);
    }
    return seekData(dataOffset, dataSize, refs, block, key, keyHash, sink, g);
  }

  /**
   * Searches a block in its {@link BlockIterator#kept kept} form, the first {@code length} bytes of
   * {@code kept}, for {@code key}.
   */
  private boolean searchKept(
      BlockIterator it, byte[] kept, int length, byte[] key, long keyHash, ValueSink sink) {
    resetOntoKept(it, kept, length);
    return searchBlock(it, key, keyHash, sink);
  }

  /** The data block at {@code offset} read, verified and decoded into the form a table keeps. */
  private byte[] keptForm(long offset, int size) {
    byte[] raw = readBlock(offset, size, "data", false);
    try {
      return BlockIterator.kept(raw);
    } catch (RuntimeException e) {
      throw corrupt("data", offset, e);
    }
  }

  /**
   * Searches the data block at {@code offset} (block {@code block} of {@code refs}, when not null)
   * for {@code key}, pinned in the cache meanwhile.
   */
  private boolean seekData(
      long offset,
      int size,
      BlockRefs refs,
      int block,
      byte[] key,
      long keyHash,
      ValueSink sink,
      GetScratch g) {
    BlockCache.Pin pin = g.pin;
    try {
      loadData(g.it, offset, size, pin, refs, block);
      return searchBlock(g.it, key, keyHash, sink);
    } finally {
      releaseData(pin);
    }
  }

  /** Searches the block {@code it} is on for {@code key}, handing its value to {@code sink}. */
  private boolean searchBlock(BlockIterator it, byte[] key, long keyHash, ValueSink sink) {
    boolean found;
    try {
      found = it.seekExact(key, keyHash);
    } catch (CobbleException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new CorruptionException(name, "cannot decode block entry: " + e, e);
    }
    if (found) {
      it.valueTo(sink);
    }
    return found;
  }

  /**
   * Points {@code it} at the data block at {@code offset}. With a cache the block is pinned through
   * {@code pin} until {@link #releaseData}, held in the {@link BlockIterator#kept kept} form (on a
   * miss read, decoded and written in that form into a recycled array), so a search reads the
   * restart words at the array's start instead of the restarts at its end; without a cache it is
   * read into a new array.
   */
  void loadData(BlockIterator it, long offset, int size, BlockCache.Pin pin) {
    loadData(it, offset, size, pin, null, 0);
  }

  /**
   * As {@link #loadData(BlockIterator, long, int, BlockCache.Pin)} for data block {@code block} of
   * this table's {@code refs} (null: none), which then reference the block while it is cached.
   */
  void loadData(
      BlockIterator it, long offset, int size, BlockCache.Pin pin, BlockRefs refs, int block) {
    if (cache == null) {
      byte[] data = readBlock(offset, size, "data", false);
      resetOnto(it, data, data.length, "data");
      return;
    }
    checkHandle(offset, size, "data");
    long cacheKey = BlockCache.key(fileNumber, offset);
    if (!cache.acquire(cacheKey, pin, refs, block)) {
      Frame f = readFrame(offset, size, "data");
      byte[] raw;
      int rawLength = f.rawLength;
      try {
        raw = f.decoded(rawLength);
        decode(f, offset, size, "data", raw);
      } finally {
        doneFrame(f);
      }
      byte[] kept;
      int keptLength;
      try {
        keptLength = it.prepareKept(raw, rawLength);
        kept = cache.allocate(cacheKey, keptLength);
        it.writeKept(kept);
      } catch (RuntimeException e) {
        throw corrupt("data", offset, e);
      }
      cache.insertPinned(cacheKey, kept, keptLength, pin, refs, block);
    }
    resetOntoKept(it, pin.data(), pin.length());
    if (refs != null) {
      PinnedMetadata.Blocks p = metadata.loaded();
      if (p != null && p.hints != null) {
        p.hints.fill(block, it);
      }
    }
  }

  /** Points {@code it} at a data block {@link BlockRefs#pin pinned by reference}. */
  void resetOntoCached(BlockIterator it, byte[] cached) {
    resetOntoKept(it, cached, BlockCache.cachedLength(cached));
  }

  /**
   * Points {@code it} at the data block in {@link BlockIterator#kept kept} form in the first {@code
   * length} bytes of {@code kept}; a malformed form is a corruption error naming this table.
   */
  private void resetOntoKept(BlockIterator it, byte[] kept, int length) {
    try {
      it.resetKept(kept, length);
    } catch (RuntimeException e) {
      throw new CorruptionException(name, "data block: " + e.getMessage(), e);
    }
  }

  /** Unpins what {@link #loadData} pinned (nothing when nothing is pinned). */
  void releaseData(BlockCache.Pin pin) {
    if (cache != null) {
      cache.release(pin);
    }
  }

  /**
   * Points {@code it} at index partition {@code ordinal} (at {@code offset}): the pinned copy when
   * partitions are pinned, else through the cache.
   */
  void loadIndexPartition(BlockIterator it, int ordinal, long offset, int size) {
    PinnedMetadata.Blocks p = metadata.loaded();
    byte[] raw =
        p != null && p.index != null
            ? p.index[ordinal]
            : readBlock(offset, size, "index partition", true);
    resetOnto(it, raw, raw.length, "index partition");
  }

  /**
   * The pinned metadata when it is loaded and keeps both index levels decoded, else null: cursors
   * then seek as point gets do, without walking the index blocks. Does not load lazy metadata,
   * which stays a point read's to load ({@code sst.read-metadata-cache.mode}).
   */
  PinnedMetadata.Blocks decodedIndex() {
    PinnedMetadata.Blocks p = metadata.loaded();
    return p != null && p.indexDecoded != null ? p : null;
  }

  /** Points {@code it} at the top-level index: the pinned block, else through the cache. */
  void loadTopIndex(BlockIterator it) {
    PinnedMetadata.Blocks p = metadata.loaded();
    if (p != null) {
      it.reset(p.top);
    } else {
      byte[] raw = readBlock(footer.topIndex(), "top-level index", true);
      resetOnto(it, raw, raw.length, "top-level index");
    }
  }

  /**
   * Iterator over all entries. {@code readAheadBytes > 0} reads data blocks sequentially in chunks
   * of that size and bypasses the cache (compaction); 0 uses the cache (user scans).
   */
  public KvIterator iterator(int readAheadBytes) {
    return new TableIterator(this, readAheadBytes);
  }

  /**
   * As {@link #iterator(int)}, reopening {@code reuse} (a closed or open iterator of any table, or
   * null) over this table when it is a table iterator with the same read-ahead, so a cursor that
   * moves from file to file, or a pooled one, allocates nothing.
   */
  public KvIterator iterator(int readAheadBytes, KvIterator reuse) {
    if (reuse instanceof TableIterator && ((TableIterator) reuse).readAhead() == readAheadBytes) {
      return ((TableIterator) reuse).reopen(this);
    }
    if (reuse != null) {
      reuse.close();
    }
    return new TableIterator(this, readAheadBytes);
  }

  private void closeQuietly() {
    try {
      source.close();
    } catch (IOException ignored) {
      // Nothing useful to do; the descriptor is released either way.
    }
  }

  /** Data blocks whose restarts this table has recorded ({@link RestartHints}). */
  int hintedBlocks() {
    PinnedMetadata.Blocks p = metadata.loaded();
    return p == null || p.hints == null ? 0 : p.hints.hintedBlocks();
  }

  /** Bytes of data blocks this table keeps in memory ({@link ResidentBlocks}); 0 if none. */
  public long residentBytes() {
    PinnedMetadata.Blocks p = metadata.loaded();
    return p == null || p.resident == null ? 0 : p.resident.used();
  }

  /**
   * Adds a holder, who closes the table once like the opener; false (nothing added) when the last
   * holder already closed it. Lets read-only Dbs over successive snapshots share the table of a
   * file they all list ({@link SharedTables}).
   */
  boolean retain() {
    for (int h = holders.get(); h > 0; h = holders.get()) {
      if (holders.compareAndSet(h, h + 1)) {
        return true;
      }
    }
    return false;
  }

  /** Runs {@code action} after the last holder closed the table. */
  void afterLastClose(Runnable action) {
    this.afterLastClose = action;
  }

  /** Releases this holder's hold; the last one closes the file and drops its cached blocks. */
  @Override
  public void close() {
    if (holders.decrementAndGet() != 0) {
      return;
    }
    closeQuietly();
    PinnedMetadata.Blocks p = metadata.loaded();
    if (p != null && p.resident != null) {
      p.resident.release();
    }
    if (cache != null) {
      cache.evictFile(fileNumber);
    }
    Runnable action = afterLastClose;
    if (action != null) {
      action.run();
    }
  }
}
