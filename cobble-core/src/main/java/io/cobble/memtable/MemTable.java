package io.cobble.memtable;

import io.cobble.iterator.KvIterator;
import io.cobble.util.ValueSink;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * In-memory buffer of row deltas keyed by internal key. One writer at a time, which the caller
 * guarantees (the Db puts under its shard mutex, so a lock here would be a second one per put), and
 * any number of readers that take no lock.
 *
 * <p>Lock-free reads rest on three rules every implementation follows. Records live in an {@link
 * Arena} and are never modified once their address is published. An address is published only by a
 * release store (into an index slot, a link or a count) made after the record's bytes were written,
 * and readers load it with an acquire load, so a reader that sees an address sees the whole record:
 * an update writes a new combined record and swings the one slot that points to it, so a reader
 * gets the old row or the new row, never a mix. Index arrays that grow are replaced by copies and
 * published through volatile fields, which readers re-read after each acquire, so they never index
 * an array older than the address they hold.
 */
public abstract class MemTable {
  static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);
  static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

  protected final RowCombiner combiner;
  private final long id;
  private final AtomicLong minMergeWriteTime = new AtomicLong(Long.MAX_VALUE);
  // Set before the memtable is shared; null = every scan seeks it.
  private MemTablePrefixFilter prefixFilter;

  protected MemTable(long id, RowCombiner combiner) {
    this.id = id;
    this.combiner = combiner;
  }

  public long id() {
    return id;
  }

  /** Applies a row delta; the first {@code keyLen}/{@code rowLen} bytes are key and delta. */
  public final void put(byte[] key, int keyLen, byte[] row, int rowLen) {
    put(key, keyLen, row, rowLen, combiner.replacesOlder(key, 0, row, 0, rowLen));
  }

  /**
   * Applies a row delta whose caller already knows whether it replaces every older delta of its key
   * ({@link RowCombiner#replacesOlder}), as a whole-row put does; such a delta is stored without a
   * fold, and a fold of the key later starts from it.
   */
  public final void put(byte[] key, int keyLen, byte[] row, int rowLen, boolean replacesOlder) {
    if (prefixFilter != null) {
      prefixFilter.add(key, keyLen);
    }
    doPut(key, keyLen, row, rowLen, replacesOlder);
  }

  /**
   * Records the families and key prefixes of this memtable's rows in {@code filter}, which {@link
   * #mayHold} then consults. Before the first put and before the memtable is shared.
   */
  public void prefixFilter(MemTablePrefixFilter filter) {
    this.prefixFilter = filter;
  }

  /**
   * Whether this memtable may hold a row of family {@code family} with a tree key in {@code [lo,
   * hi)} (null = unbounded); true without a {@link #prefixFilter}. Takes no lock.
   */
  public boolean mayHold(int family, byte[] lo, byte[] hi) {
    return prefixFilter == null || prefixFilter.mayHold(family, lo, hi);
  }

  /**
   * The combined row of the key, or null. Takes no lock. A key the {@link #prefixFilter} rules out
   * ({@link MemTablePrefixFilter#mayHoldKey}) is not searched for.
   */
  public byte[] get(byte[] key, int keyLen) {
    if (prefixFilter != null && !prefixFilter.mayHoldKey(key, keyLen)) {
      return null;
    }
    return doGet(key, keyLen);
  }

  /**
   * Hands the combined row of the key to {@code sink} in place and returns true, or returns false
   * when the key is absent. Takes no lock and allocates nothing. A key the {@link #prefixFilter}
   * rules out is not searched for.
   */
  public boolean get(byte[] key, int keyLen, ValueSink sink) {
    if (prefixFilter != null && !prefixFilter.mayHoldKey(key, keyLen)) {
      return false;
    }
    return doGet(key, keyLen, sink);
  }

  /**
   * Sorted iterator over combined rows as they were when it was created: it sees every write that
   * completed before that and none that starts after it (new keys, overwrites, deletes and merges
   * alike), whatever the memtable does meanwhile.
   */
  public KvIterator iterator() {
    return new CursorIterator(cursor());
  }

  /**
   * Hands every row {@link #iterator()} would return to {@code visitor} in key order, in place: for
   * a flush, which copies each row into a table anyway and so needs no copy of its own.
   */
  public void forEachRow(RowVisitor visitor) {
    cursor().visitAll(visitor);
  }

  /** Receives one row as slices of arrays the memtable owns, readable during the call only. */
  public interface RowVisitor {
    void accept(byte[] key, int keyOff, int keyLen, byte[] row, int rowOff, int rowLen);
  }

  public final long approximateBytes() {
    return doApproximateBytes();
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

  /** Called by the single writer. */
  protected abstract void doPut(
      byte[] key, int keyLen, byte[] row, int rowLen, boolean replacesOlder);

  /** Called by any thread, concurrently with {@link #doPut}. */
  protected abstract byte[] doGet(byte[] key, int keyLen);

  /** As {@link #doGet(byte[], int)}, handing the row to {@code sink} in place. */
  protected abstract boolean doGet(byte[] key, int keyLen, ValueSink sink);

  protected abstract long doApproximateBytes();

  /**
   * Creates a raw cursor over the rows as of its creation (see {@link #iterator()}); safe to use
   * concurrently with {@link #doPut}.
   */
  protected abstract Cursor cursor();

  /** Raw positional cursor. */
  protected interface Cursor {
    void seekToFirst();

    void seek(byte[] target);

    boolean valid();

    void next();

    byte[] key();

    byte[] value();

    /** Hands the current row to {@code visitor}, in place where the cursor can. */
    default void visit(RowVisitor visitor) {
      byte[] key = key();
      byte[] value = value();
      visitor.accept(key, 0, key.length, value, 0, value.length);
    }

    /** Hands every row from the first on to {@code visitor}, as {@link #visit} does. */
    default void visitAll(RowVisitor visitor) {
      for (seekToFirst(); valid(); next()) {
        visit(visitor);
      }
    }
  }

  /**
   * Adapts a cursor to {@link KvIterator}: each row it stops at is read where the cursor hands it
   * over ({@link Cursor#visit}: the arena's pages, whose published bytes never change), so moving
   * copies nothing; {@link #key()} and {@link #value()} copy.
   */
  private static final class CursorIterator implements KvIterator, RowVisitor {
    private final Cursor cursor;
    private byte[] keyArray;
    private int keyOffset;
    private int keyLength;
    private byte[] valueArray;
    private int valueOffset;
    private int valueLength;

    CursorIterator(Cursor cursor) {
      this.cursor = cursor;
    }

    private void load() {
      if (cursor.valid()) {
        cursor.visit(this);
      } else {
        keyArray = null;
        valueArray = null;
      }
    }

    @Override
    public void accept(byte[] key, int keyOff, int keyLen, byte[] row, int rowOff, int rowLen) {
      keyArray = key;
      keyOffset = keyOff;
      keyLength = keyLen;
      valueArray = row;
      valueOffset = rowOff;
      valueLength = rowLen;
    }

    @Override
    public void seekToFirst() {
      cursor.seekToFirst();
      load();
    }

    @Override
    public void seek(byte[] target) {
      cursor.seek(target);
      load();
    }

    @Override
    public boolean valid() {
      return keyArray != null;
    }

    @Override
    public void next() {
      cursor.next();
      load();
    }

    @Override
    public byte[] key() {
      return Arrays.copyOfRange(keyArray, keyOffset, keyOffset + keyLength);
    }

    @Override
    public byte[] value() {
      return Arrays.copyOfRange(valueArray, valueOffset, valueOffset + valueLength);
    }

    @Override
    public byte[] keyArray() {
      return keyArray;
    }

    @Override
    public int keyOffset() {
      return keyOffset;
    }

    @Override
    public int keyLength() {
      return keyLength;
    }

    @Override
    public byte[] valueArray() {
      return valueArray;
    }

    @Override
    public int valueOffset() {
      return valueOffset;
    }

    @Override
    public int valueLength() {
      return valueLength;
    }

    @Override
    public void close() {}
  }
}
