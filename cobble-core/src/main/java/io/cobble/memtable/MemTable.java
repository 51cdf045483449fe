package io.cobble.memtable;

import io.cobble.iterator.KvIterator;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * In-memory buffer of row deltas keyed by internal key. One writer at a time (the Db serialises
 * writes) and many readers; a read/write lock keeps every row read whole. Implementations keep
 * records in an {@link Arena} and index them with primitive arrays.
 */
public abstract class MemTable {
  protected final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  protected final RowCombiner combiner;
  private final long id;
  private final AtomicLong minMergeWriteTime = new AtomicLong(Long.MAX_VALUE);

  protected MemTable(long id, RowCombiner combiner) {
    this.id = id;
    this.combiner = combiner;
  }

  public long id() {
    return id;
  }

  /** Applies a row delta; the first {@code keyLen}/{@code rowLen} bytes are key and delta. */
  public final void put(byte[] key, int keyLen, byte[] row, int rowLen) {
    lock.writeLock().lock();
    try {
      doPut(key, keyLen, row, rowLen);
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** The combined row of the key, or null. */
  public byte[] get(byte[] key, int keyLen) {
    lock.readLock().lock();
    try {
      return doGet(key, keyLen);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Sorted iterator over combined rows; each step is taken under the read lock. */
  public KvIterator iterator() {
    return new LockedIterator(this);
  }

  public final long approximateBytes() {
    lock.readLock().lock();
    try {
      return doApproximateBytes();
    } finally {
      lock.readLock().unlock();
    }
  }

  public abstract int entryCount();

  /** Called when the memtable becomes immutable; no write follows. */
  public void seal() {}

  /**
   * Records the write time of a merge so compaction never drops an expired value that this newer
   * merge was applied on top of.
   */
  public void noteMerge(long writeTime) {
    minMergeWriteTime.accumulateAndGet(writeTime, Math::min);
  }

  public long minMergeWriteTime() {
    return minMergeWriteTime.get();
  }

  protected abstract void doPut(byte[] key, int keyLen, byte[] row, int rowLen);

  protected abstract byte[] doGet(byte[] key, int keyLen);

  protected abstract long doApproximateBytes();

  /** Creates the raw cursor; callers hold the read lock around each of its calls. */
  protected abstract Cursor cursor();

  /** Raw positional cursor, driven by {@link LockedIterator}. */
  protected interface Cursor {
    void seekToFirst();

    void seek(byte[] target);

    boolean valid();

    void next();

    byte[] key();

    byte[] value();
  }

  private static final class LockedIterator implements KvIterator {
    private final MemTable table;
    private final Cursor cursor;
    private byte[] key;
    private byte[] value;

    LockedIterator(MemTable table) {
      this.table = table;
      table.lock.readLock().lock();
      try {
        this.cursor = table.cursor();
      } finally {
        table.lock.readLock().unlock();
      }
    }

    private void load() {
      if (cursor.valid()) {
        key = cursor.key();
        value = cursor.value();
      } else {
        key = null;
        value = null;
      }
    }

    @Override
    public void seekToFirst() {
      table.lock.readLock().lock();
      try {
        cursor.seekToFirst();
        load();
      } finally {
        table.lock.readLock().unlock();
      }
    }

    @Override
    public void seek(byte[] target) {
      table.lock.readLock().lock();
      try {
        cursor.seek(target);
        load();
      } finally {
        table.lock.readLock().unlock();
      }
    }

    @Override
    public boolean valid() {
      return key != null;
    }

    @Override
    public void next() {
      table.lock.readLock().lock();
      try {
        cursor.next();
        load();
      } finally {
        table.lock.readLock().unlock();
      }
    }

    @Override
    public byte[] key() {
      return key;
    }

    @Override
    public byte[] value() {
      return value;
    }

    @Override
    public void close() {}
  }
}
