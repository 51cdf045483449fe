package io.cobble.memtable;

import java.util.Arrays;

/**
 * Sorts record addresses by key (stable, so insertion order survives among equal keys) and serves
 * them through a cursor. Used by the unordered memtables when something needs key order.
 */
final class SortedRecords {
  private SortedRecords() {}

  static long[] sort(Arena arena, long[] addrs, int count) {
    long[] a = Arrays.copyOf(addrs, count);
    long[] tmp = new long[count];
    mergeSort(arena, a, tmp, 0, count);
    return a;
  }

  private static void mergeSort(Arena arena, long[] a, long[] tmp, int lo, int hi) {
    if (hi - lo < 16) {
      for (int i = lo + 1; i < hi; i++) {
        long v = a[i];
        int j = i - 1;
        while (j >= lo && arena.compareKeys(a[j], v) > 0) {
          a[j + 1] = a[j];
          j--;
        }
        a[j + 1] = v;
      }
      return;
    }
    int mid = (lo + hi) >>> 1;
    mergeSort(arena, a, tmp, lo, mid);
    mergeSort(arena, a, tmp, mid, hi);
    if (arena.compareKeys(a[mid - 1], a[mid]) <= 0) {
      return;
    }
    System.arraycopy(a, lo, tmp, lo, hi - lo);
    int i = lo;
    int j = mid;
    for (int k = lo; k < hi; k++) {
      if (i < mid && (j >= hi || arena.compareKeys(tmp[i], tmp[j]) <= 0)) {
        a[k] = tmp[i++];
      } else {
        a[k] = tmp[j++];
      }
    }
  }

  /** First index whose key is >= target in a sorted, de-duplicated array. */
  static int lowerBound(Arena arena, long[] sorted, int count, byte[] target) {
    int lo = 0;
    int hi = count;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (arena.compareKey(sorted[mid], target, target.length) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** Cursor over sorted unique records whose values are given alongside (already combined). */
  static final class ArrayCursor implements MemTable.Cursor {
    private final Arena arena;
    private final long[] keys;
    private final byte[][] values;
    private final int count;
    private int pos;

    ArrayCursor(Arena arena, long[] keys, byte[][] values, int count) {
      this.arena = arena;
      this.keys = keys;
      this.values = values;
      this.count = count;
      this.pos = count;
    }

    @Override
    public void seekToFirst() {
      pos = 0;
    }

    @Override
    public void seek(byte[] target) {
      pos = lowerBound(arena, keys, count, target);
    }

    @Override
    public boolean valid() {
      return pos < count;
    }

    @Override
    public void next() {
      pos++;
    }

    @Override
    public byte[] key() {
      return arena.key(keys[pos]);
    }

    @Override
    public byte[] value() {
      return values == null ? arena.value(keys[pos]) : values[pos];
    }
  }
}
