package io.cobble.memtable;

import io.cobble.util.ValueSink;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;

/**
 * Write-burst memtable: every delta is appended without looking anything up. Reads and ordered
 * access sort a snapshot and fold equal keys, so this type suits write-only phases.
 *
 * <p>Lock-free reads (see {@link MemTable}): an appended address is never changed, and the count is
 * release-stored after it, so a snapshot of the first {@code count} addresses is complete.
 */
public class VecMemTable extends MemTable {
  private static final VarHandle COUNT;

  static {
    try {
      COUNT = MethodHandles.lookup().findVarHandle(VecMemTable.class, "count", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Arena arena = new Arena();
  private volatile long[] records = new long[1024];
  private int count;
  private volatile Snapshot snapshot;

  public VecMemTable(long id, RowCombiner combiner) {
    super(id, combiner);
  }

  @Override
  protected void doPut(byte[] key, int keyLen, byte[] row, int rowLen, boolean replacesOlder) {
    long[] recs = records;
    int c = count;
    if (c == recs.length) {
      recs = Arrays.copyOf(recs, c * 2);
      records = recs;
    }
    long addr = arena.add(key, keyLen, row, 0, rowLen);
    recs[c] = replacesOlder ? addr | Arena.REPLACES_OLDER : addr;
    COUNT.setRelease(this, c + 1);
  }

  /** Sorted, folded view of everything appended so far; rebuilt when stale. */
  private Snapshot snapshot() {
    int c = entryCount();
    Snapshot s = snapshot;
    if (s != null && s.sourceCount == c) {
      return s;
    }
    synchronized (this) {
      s = snapshot;
      if (s != null && s.sourceCount == c) {
        return s;
      }
      s = build(c);
      snapshot = s;
      return s;
    }
  }

  /**
   * Sorts and folds the first {@code count} appended records (all published: see COUNT). A key
   * written once, or whose newest row replaces its older ones, keeps no value copy: its row is read
   * from the arena when asked for. Only other keys written more than once get their combined row
   * stored.
   */
  private Snapshot build(int count) {
    long[] sorted = SortedRecords.sortPacked(arena, records, count);
    long[] keys = new long[count];
    byte[][] values = null;
    int unique = 0;
    int i = 0;
    while (i < count) {
      int first = i * SortedRecords.STRIDE;
      int end = i + 1;
      while (end < count
          && SortedRecords.compare(arena, sorted, first, sorted, end * SortedRecords.STRIDE) == 0) {
        end++;
      }
      int from = newestReplacing(sorted, i, end);
      keys[unique] = sorted[from * SortedRecords.STRIDE + 2];
      if (end - from > 1) {
        if (values == null) {
          values = new byte[count][];
        }
        values[unique] = fold(sorted, from, end);
      }
      unique++;
      i = end;
    }
    return new Snapshot(count, keys, values, unique);
  }

  /**
   * The newest of sorted records [from, to) (one key, oldest first) whose row replaces all older
   * ones, or {@code from}: the fold starts there, and a key whose newest row replaces the rest
   * keeps no folded copy at all.
   */
  private int newestReplacing(long[] sorted, int from, int to) {
    for (int i = to - 1; i > from; i--) {
      if ((sorted[i * SortedRecords.STRIDE + 2] & Arena.REPLACES_OLDER) != 0) {
        return i;
      }
    }
    return from;
  }

  /** Combines the rows of sorted records [from, to), which share one key, oldest first. */
  private byte[] fold(long[] sorted, int from, int to) {
    long addr = sorted[from * SortedRecords.STRIDE + 2];
    byte[] key = arena.key(addr);
    byte[] row = arena.value(addr);
    for (int i = from + 1; i < to; i++) {
      row = combiner.combine(key, row, arena.value(sorted[i * SortedRecords.STRIDE + 2]));
    }
    return Objects.requireNonNull(row, "RowCombiner returned null: it must return the folded row");
  }

  @Override
  protected byte[] doGet(byte[] key, int keyLen) {
    Snapshot s = snapshot();
    byte[] target = keyLen == key.length ? key : Arrays.copyOf(key, keyLen);
    int i = SortedRecords.lowerBound(arena, s.keys, s.unique, target);
    if (i < s.unique && arena.compareKey(s.keys[i], key, keyLen) == 0) {
      return s.values != null && s.values[i] != null ? s.values[i] : arena.value(s.keys[i]);
    }
    return null;
  }

  @Override
  protected boolean doGet(byte[] key, int keyLen, ValueSink sink) {
    Snapshot s = snapshot();
    int i = SortedRecords.lowerBound(arena, s.keys, s.unique, key, keyLen);
    if (i < s.unique && arena.compareKey(s.keys[i], key, keyLen) == 0) {
      byte[] combined = s.values != null ? s.values[i] : null;
      if (combined != null) {
        sink.accept(combined, 0, combined.length);
      } else {
        arena.valueTo(s.keys[i], sink);
      }
      return true;
    }
    return false;
  }

  @Override
  protected long doApproximateBytes() {
    return arena.usedBytes() + (long) entryCount() * 8;
  }

  @Override
  public int entryCount() {
    return (int) COUNT.getAcquire(this);
  }

  @Override
  protected Cursor cursor() {
    Snapshot s = snapshot();
    return new SortedRecords.ArrayCursor(arena, s.keys, s.values, s.unique);
  }

  /**
   * Replays every appended delta in order into another memtable, each marked as replacing older
   * ones exactly when it was appended so.
   */
  void replayInto(MemTable target) {
    for (int i = 0; i < count; i++) {
      byte[] k = arena.key(records[i]);
      byte[] v = arena.value(records[i]);
      target.doPut(k, k.length, v, v.length, (records[i] & Arena.REPLACES_OLDER) != 0);
    }
  }

  private static final class Snapshot {
    final int sourceCount;
    final long[] keys;

    /** Combined rows of keys written more than once; null entries (or array): read the record. */
    final byte[][] values;

    final int unique;

    Snapshot(int sourceCount, long[] keys, byte[][] values, int unique) {
      this.sourceCount = sourceCount;
      this.keys = keys;
      this.values = values;
      this.unique = unique;
    }
  }
}
