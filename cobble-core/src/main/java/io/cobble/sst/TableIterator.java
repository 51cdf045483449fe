package io.cobble.sst;

import io.cobble.CobbleException;
import io.cobble.CorruptionException;
import io.cobble.iterator.KvIterator;
import io.cobble.util.ByteReader;
import io.cobble.util.ReadAhead;

/**
 * Two-level cursor over a table: top-level index → index partition → data block. With read-ahead it
 * reads data blocks in large sequential chunks and leaves the block cache alone.
 */
final class TableIterator implements KvIterator {
  /** Below this the caller asked for plain block-by-block reads without kernel hints. */
  private static final int MIN_HINTED_READ_AHEAD = 4096;

  private final Table table;
  private final int readAhead;
  private final BlockIterator top;
  private BlockIterator index;
  private BlockIterator data;
  private byte[] raBuf;
  private long raStart = -1;
  private int raLen;
  private ReadAhead hint;

  TableIterator(Table table, int readAhead) {
    this.table = table;
    this.readAhead = readAhead;
    this.top = table.topIndex().iterator();
  }

  private RuntimeException wrap(RuntimeException e) {
    if (e instanceof CobbleException) {
      return e;
    }
    return new CorruptionException(table.name(), "cannot decode block entry: " + e, e);
  }

  private boolean loadIndex() {
    if (!top.valid()) {
      index = null;
      return false;
    }
    ByteReader r = new ByteReader(top.value());
    int ordinal = r.readVarInt();
    index = table.indexPartition(ordinal, BlockHandle.decode(r)).iterator();
    return true;
  }

  private boolean loadData() {
    if (index == null || !index.valid()) {
      data = null;
      return false;
    }
    BlockHandle h = BlockHandle.decode(new ByteReader(index.value()));
    byte[] raw = readAhead > 0 ? readSequential(h) : table.readBlock(h, "data", true);
    data = table.block(raw, "data").iterator();
    return true;
  }

  private byte[] readSequential(BlockHandle h) {
    int need = h.size() + BlockHandle.TRAILER_SIZE;
    if (raStart < 0 || h.offset() < raStart || h.offset() + need > raStart + raLen) {
      long end = Math.min(table.fileSize() - Footer.SIZE, h.offset() + Math.max(need, readAhead));
      int len = (int) Math.max(need, end - h.offset());
      if (raBuf == null || raBuf.length < len) {
        raBuf = new byte[len];
      }
      if (readAhead >= MIN_HINTED_READ_AHEAD && table.localPath() != null) {
        if (hint == null) {
          hint = ReadAhead.open(table.localPath());
        }
        // Prefetch the chunk after this one while this one is being merged.
        hint.willNeed(h.offset() + len, readAhead);
      }
      table.readSequential(raBuf, len, h.offset());
      raStart = h.offset();
      raLen = len;
    }
    try {
      return table.unframe(raBuf, (int) (h.offset() - raStart), h.size(), "data", h.offset());
    } catch (CorruptionException e) {
      if (table.localPath() != null) {
        throw e;
      }
      // A remote block may be damaged only in a local cache: the single-block read drops that
      // copy and reads the block again.
      raStart = -1;
      return table.readBlock(h, "data", false);
    }
  }

  /** Moves forward until positioned on an entry or exhausted. */
  private void skipEmpty() {
    while (data == null || !data.valid()) {
      if (index != null && index.valid()) {
        index.next();
        if (index.valid()) {
          loadData();
          if (data != null) {
            data.seekToFirst();
          }
          continue;
        }
      }
      if (!top.valid()) {
        data = null;
        return;
      }
      top.next();
      if (!loadIndex()) {
        data = null;
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
      top.seekToFirst();
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
      top.seek(target);
      data = null;
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

  @Override
  public boolean valid() {
    return data != null && data.valid();
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
  public void close() {
    if (hint != null) {
      hint.close();
      hint = null;
    }
  }
}
