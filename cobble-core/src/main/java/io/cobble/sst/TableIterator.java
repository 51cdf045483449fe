package io.cobble.sst;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.cache.BlockCache;
import io.cobble.cache.BlockRefs;
import io.cobble.iterator.KvEntry;
import io.cobble.iterator.KvIterator;
import io.cobble.util.ByteReader;
import io.cobble.util.ReadAhead;

/**
 * Two-level cursor over a table: top-level index → index partition → data block. User scans pin the
 * cached data block they stand on (decoded into a recycled array on a miss) and unpin it when they
 * move off it or close, so a scan copies no block; its three block cursors are reused for every
 * block it visits. With read-ahead (compaction) it reads data blocks in large sequential chunks and
 * leaves the block cache alone.
 */
final class TableIterator implements KvIterator {
  /** Below this the caller asked for plain block-by-block reads without kernel hints. */
  private static final int MIN_HINTED_READ_AHEAD = 4096;

  /** Growing the reused block array doubles it up to this, then grows to the block's size. */
  private static final int MAX_KEPT_BLOCK = 1 << 20;

  private Table table;
  private final int readAhead;
  private final BlockIterator top = new BlockIterator();
  private final BlockIterator index = new BlockIterator();
  private final BlockIterator data = new BlockIterator();
  private final ByteReader reader = new ByteReader();
  private final BlockCache.Pin pin = new BlockCache.Pin();
  // The data block pinned by reference ({@link BlockRefs}) instead of through the pin, or null.
  private byte[] pinnedByRef;
  private boolean indexLoaded;
  private boolean dataLoaded;
  private byte[] raBuf;
  // The decoded data block of a sequential read, one array reused for every block (the in-place
  // key and value views are valid only until the cursor moves, see KvIterator).
  private byte[] block = new byte[0];
  private int blockLength;
  private long raStart = -1;
  private int raLen;
  private ReadAhead hint;
  // Set while positioned through the decoded index (user scans of a table whose index partitions
  // are pinned and decoded): the top-level entry and the data block's entry in its partition.
  // A seek then costs two array searches instead of two block seeks that parse varint headers at
  // every step; the index block cursors above are left unused.
  private PinnedMetadata.Blocks decoded;
  private int topEntry;
  private int entry;
  // What RestartHints.touch loads is summed here, so the loads are kept.
  private int touched;

  TableIterator(Table table, int readAhead) {
    this.table = table;
    this.readAhead = readAhead;
    table.loadTopIndex(top);
  }

  int readAhead() {
    return readAhead;
  }

  /** Closes this cursor and reopens it, unpositioned, over {@code other}. */
  TableIterator reopen(Table other) {
    close();
    table = other;
    indexLoaded = false;
    decoded = null;
    raStart = -1;
    table.loadTopIndex(top);
    return this;
  }

  private RuntimeException wrap(RuntimeException e) {
    if (e instanceof CobbleException) {
      return e;
    }
    return new CorruptionException(table.name(), "cannot decode block entry: " + e, e);
  }

  private boolean loadIndex() {
    indexLoaded = false;
    if (!top.valid()) {
      return false;
    }
    ByteReader r = top.valueReader(reader);
    int ordinal = r.readVarInt();
    long offset = r.readVarLong();
    int size = r.readVarInt();
    table.loadIndexPartition(index, ordinal, offset, size);
    indexLoaded = true;
    return true;
  }

  private boolean loadData() {
    unloadData();
    if (!indexLoaded || !index.valid()) {
      return false;
    }
    ByteReader r = index.valueReader(reader);
    long offset = r.readVarLong();
    int size = r.readVarInt();
    if (readAhead > 0) {
      readSequential(offset, size);
      table.resetOnto(data, block, blockLength, "data");
    } else {
      table.loadData(data, offset, size, pin);
    }
    dataLoaded = true;
    return true;
  }

  private void unloadData() {
    dataLoaded = false;
    if (pinnedByRef != null) {
      BlockRefs.unpin(pinnedByRef);
      pinnedByRef = null;
    }
    table.releaseData(pin);
  }

  /** Reads the data block at {@code offset} into {@link #block}. */
  private void readSequential(long offset, int size) {
    int need = size + BlockHandle.TRAILER_SIZE;
    if (raStart < 0 || offset < raStart || offset + need > raStart + raLen) {
      long end = Math.min(table.fileSize() - Footer.SIZE, offset + Math.max(need, readAhead));
      int len = (int) Math.max(need, end - offset);
      if (raBuf == null || raBuf.length < len) {
        raBuf = new byte[len];
      }
      if (readAhead >= MIN_HINTED_READ_AHEAD && table.localPath() != null) {
        if (hint == null) {
          hint = ReadAhead.open(table.localPath());
        }
        // Prefetch the chunk after this one while this one is being merged.
        hint.willNeed(offset + len, readAhead);
      }
      table.readSequential(raBuf, len, offset);
      raStart = offset;
      raLen = len;
    }
    int at = (int) (offset - raStart);
    try {
      int rawLength = table.verifyFramed(raBuf, at, size, "data", offset);
      if (block.length < rawLength) {
        block = new byte[Math.max(rawLength, Math.min(2 * block.length, MAX_KEPT_BLOCK))];
      }
      table.decodeFramed(raBuf, at, size, block, rawLength, "data", offset);
      blockLength = rawLength;
    } catch (CorruptionException e) {
      if (table.localPath() != null) {
        throw e;
      }
      // A remote block may be damaged only in a local cache: the single-block read drops that
      // copy and reads the block again.
      raStart = -1;
      block = table.readBlock(new BlockHandle(offset, size), "data", false);
      blockLength = block.length;
    }
  }

  /** The decoded index to seek with, or null to walk the index blocks. */
  private PinnedMetadata.Blocks decodedIndex() {
    return readAhead > 0 ? null : table.decodedIndex();
  }

  /**
   * Positions the decoded cursor at top-level entry {@code top}, data block {@code at} of its
   * partition, and loads that block, moving on to the next partition past a partition's last block.
   * False, with nothing loaded, past the table's last block.
   */
  private boolean loadDecoded(int top, int at) {
    unloadData();
    topEntry = top;
    entry = at;
    while (topEntry < decoded.topDecoded.count()) {
      int ordinal = decoded.topDecoded.ordinal(topEntry);
      DecodedIndex partition = decoded.indexDecoded[ordinal];
      if (entry < partition.count()) {
        int block = decoded.firstBlock[ordinal] + entry;
        BlockRefs refs = decoded.refs;
        pinnedByRef = refs != null ? refs.pin(block) : null;
        if (pinnedByRef != null) {
          table.resetOntoCached(data, pinnedByRef);
        } else {
          table.loadData(
              data, partition.dataOffset(entry), partition.dataSize(entry), pin, refs, block);
        }
        dataLoaded = true;
        return true;
      }
      topEntry++;
      entry = 0;
    }
    return false;
  }

  /** Moves forward until positioned on an entry or exhausted. */
  private void skipEmpty() {
    if (decoded != null) {
      while (dataLoaded && !data.valid()) {
        if (loadDecoded(topEntry, entry + 1)) {
          data.seekToFirst();
        }
      }
      return;
    }
    while (!dataLoaded || !data.valid()) {
      if (indexLoaded && index.valid()) {
        index.next();
        if (index.valid()) {
          if (loadData()) {
            data.seekToFirst();
          }
          continue;
        }
      }
      if (!top.valid()) {
        unloadData();
        return;
      }
      top.next();
      if (!loadIndex()) {
        unloadData();
        return;
      }
      index.seekToFirst();
      if (loadData()) {
        data.seekToFirst();
      }
    }
  }

  @Override
  public void seekToFirst() {
    try {
      decoded = decodedIndex();
      if (decoded != null) {
        if (loadDecoded(0, 0)) {
          data.seekToFirst();
        }
        skipEmpty();
        return;
      }
      top.seekToFirst();
      unloadData();
      if (loadIndex()) {
        index.seekToFirst();
        if (loadData()) {
          data.seekToFirst();
        }
      }
      skipEmpty();
    } catch (RuntimeException e) {
      throw wrap(e);
    }
  }

  @Override
  public void seek(byte[] target) {
    try {
      decoded = decodedIndex();
      if (decoded != null) {
        int t = decoded.topDecoded.lowerBound(target);
        int at = 0;
        if (t < decoded.topDecoded.count()) {
          int ordinal = decoded.topDecoded.ordinal(t);
          at = decoded.indexDecoded[ordinal].lowerBound(target);
          touchAhead(ordinal, at, target);
        }
        if (loadDecoded(t, at)) {
          data.seek(target);
        }
        skipEmpty();
        return;
      }
      top.seek(target);
      unloadData();
      if (loadIndex()) {
        index.seek(target);
        if (loadData()) {
          data.seek(target);
        }
      }
      skipEmpty();
    } catch (RuntimeException e) {
      throw wrap(e);
    }
  }

  /**
   * Touches the lines of data block {@code at} of partition {@code ordinal} that a seek to {@code
   * target} walks ({@link RestartHints}), before {@link #loadDecoded} pins the block.
   */
  private void touchAhead(int ordinal, int at, byte[] target) {
    BlockRefs refs = decoded.refs;
    if (refs != null && at < decoded.indexDecoded[ordinal].count()) {
      int block = decoded.firstBlock[ordinal] + at;
      byte[] ahead = refs.peek(block);
      if (ahead != null) {
        touched += decoded.hints.touch(block, ahead, target, RestartHints.SCAN_TAIL);
      }
    }
  }

  @Override
  public boolean valid() {
    return dataLoaded && data.valid();
  }

  @Override
  public boolean currentInto(KvEntry to) {
    return dataLoaded && data.currentInto(to);
  }

  // As the default does, but here the calls inside bind to this class, not to whichever sources the
  // default's shared call sites have seen.
  @Override
  public boolean nextInto(KvEntry to) {
    next();
    return currentInto(to);
  }

  @Override
  public void next() {
    try {
      data.next();
      skipEmpty();
    } catch (RuntimeException e) {
      throw wrap(e);
    }
  }

  @Override
  public byte[] key() {
    return data.key();
  }

  @Override
  public byte[] value() {
    return data.value();
  }

  @Override
  public byte[] keyArray() {
    return data.keyArray();
  }

  /**
   * The data block's count: a key that starts a block shares nothing (blocks start at a restart).
   */
  @Override
  public int sharedWithPrevious() {
    return data.sharedWithPrevious();
  }

  @Override
  public int keyOffset() {
    return 0;
  }

  @Override
  public int keyLength() {
    return data.keyLength();
  }

  @Override
  public byte[] valueArray() {
    return data.valueArray();
  }

  @Override
  public int valueOffset() {
    return data.valueOffset();
  }

  @Override
  public int valueLength() {
    return data.valueLength();
  }

  @Override
  public void close() {
    if (table == null) {
      return;
    }
    unloadData();
    indexLoaded = false;
    decoded = null;
    if (hint != null) {
      hint.close();
      hint = null;
    }
    // A closed cursor kept for reuse must not keep a deleted table's metadata alive.
    table = null;
  }
}
