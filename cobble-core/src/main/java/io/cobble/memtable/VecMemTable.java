package io.cobble.memtable;

import java.util.Arrays;

/**
 * Write-burst memtable: every delta is appended without looking anything up. Reads and ordered
 * access sort a snapshot and fold equal keys, so this type suits write-only phases.
 */
public class VecMemTable extends MemTable {
  private final Arena arena = new Arena();
  private long[] records = new long[1024];
  private int count;
  private volatile Snapshot snapshot;

  public VecMemTable(long id, RowCombiner combiner) {
    super(id, combiner);
  }

  @Override
  protected void doPut(byte[] key, int keyLen, byte[] row, int rowLen) {
    if (count == records.length) {
      records = Arrays.copyOf(records, count * 2);
    }
    records[count++] = arena.add(key, keyLen, row, 0, rowLen);
  }

  /** Sorted, folded view of everything appended so far; rebuilt when stale. */
  private Snapshot snapshot() {
    Snapshot s = snapshot;
    if (s != null && s.sourceCount == count) {
      return s;
    }
    synchronized (this) {
      s = snapshot;
      if (s != null && s.sourceCount == count) {
        return s;
      }
      s = build();
      snapshot = s;
      return s;
    }
  }

  private Snapshot build() {
    long[] sorted = SortedRecords.sort(arena, records, count);
    long[] keys = new long[sorted.length];
    byte[][] values = new byte[sorted.length][];
    int unique = 0;
    for (int i = 0; i < sorted.length; i++) {
      if (unique > 0 && arena.compareKeys(keys[unique - 1], sorted[i]) == 0) {
        byte[] key = arena.key(sorted[i]);
        values[unique - 1] = combiner.combine(key, values[unique - 1], arena.value(sorted[i]));
      } else {
        keys[unique] = sorted[i];
        values[unique] = arena.value(sorted[i]);
        unique++;
      }
    }
    return new Snapshot(count, keys, values, unique);
  }

  @Override
  protected byte[] doGet(byte[] key, int keyLen) {
    Snapshot s = snapshot();
    byte[] target = keyLen == key.length ? key : Arrays.copyOf(key, keyLen);
    int i = SortedRecords.lowerBound(arena, s.keys, s.unique, target);
    if (i < s.unique && arena.compareKey(s.keys[i], key, keyLen) == 0) {
      return s.values[i];
    }
    return null;
  }

  @Override
  protected long doApproximateBytes() {
    return arena.usedBytes() + (long) count * 8;
  }

  @Override
  public int entryCount() {
    return count;
  }

  @Override
  protected Cursor cursor() {
    Snapshot s = snapshot();
    return new SortedRecords.ArrayCursor(arena, s.keys, s.values, s.unique);
  }

  /** Replays every appended delta in order into another memtable. */
  void replayInto(SkipListMemTable target) {
    for (int i = 0; i < count; i++) {
      target.load(arena.key(records[i]), arena.value(records[i]));
    }
  }

  void replayInto(HashMemTable target) {
    for (int i = 0; i < count; i++) {
      byte[] k = arena.key(records[i]);
      byte[] v = arena.value(records[i]);
      target.doPut(k, k.length, v, v.length);
    }
  }

  private static final class Snapshot {
    final int sourceCount;
    final long[] keys;
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
