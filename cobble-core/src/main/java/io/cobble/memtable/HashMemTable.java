package io.cobble.memtable;

import io.cobble.util.Bytes;
import java.util.Arrays;

/**
 * Point-read memtable: open addressing over record addresses. Each record's key hash is kept beside
 * its address, so a probe touches the arena only on a hash match and a rehash (done under the write
 * lock, while readers wait) never reads the arena at all. Ordered access (flush, scans) sorts a
 * snapshot of the addresses, which is cached until the next insert.
 */
public class HashMemTable extends MemTable {
  private final Arena arena = new Arena();
  private int[] table = new int[1 << 12];
  private long[] records = new long[1024];
  private int[] hashes = new int[1024];
  private int count;
  private long[] sortedCache;

  public HashMemTable(long id, RowCombiner combiner) {
    super(id, combiner);
  }

  private int slot(byte[] key, int keyLen, int hash) {
    int mask = table.length - 1;
    int i = hash & mask;
    while (true) {
      int n = table[i];
      if (n == 0 || (hashes[n - 1] == hash && arena.compareKey(records[n - 1], key, keyLen) == 0)) {
        return i;
      }
      i = (i + 1) & mask;
    }
  }

  @Override
  protected void doPut(byte[] key, int keyLen, byte[] row, int rowLen) {
    int hash = Bytes.hash(key, 0, keyLen);
    int s = slot(key, keyLen, hash);
    int n = table[s];
    if (n != 0) {
      byte[] combined =
          combiner.combine(key, arena.value(records[n - 1]), Arrays.copyOf(row, rowLen));
      records[n - 1] = arena.add(key, keyLen, combined, 0, combined.length);
      sortedCache = null;
      return;
    }
    if (count == records.length) {
      records = Arrays.copyOf(records, count * 2);
      hashes = Arrays.copyOf(hashes, count * 2);
    }
    hashes[count] = hash;
    records[count++] = arena.add(key, keyLen, row, 0, rowLen);
    table[s] = count;
    sortedCache = null;
    if (count * 2 > table.length) {
      rehash();
    }
  }

  private void rehash() {
    int[] old = table;
    table = new int[old.length * 2];
    int mask = table.length - 1;
    for (int n : old) {
      if (n != 0) {
        int i = hashes[n - 1] & mask;
        while (table[i] != 0) {
          i = (i + 1) & mask;
        }
        table[i] = n;
      }
    }
  }

  @Override
  protected byte[] doGet(byte[] key, int keyLen) {
    int n = table[slot(key, keyLen, Bytes.hash(key, 0, keyLen))];
    return n == 0 ? null : arena.value(records[n - 1]);
  }

  @Override
  protected long doApproximateBytes() {
    return arena.usedBytes() + (long) count * 16;
  }

  @Override
  public int entryCount() {
    return count;
  }

  @Override
  protected Cursor cursor() {
    long[] sorted = sortedCache;
    if (sorted == null) {
      sorted = SortedRecords.sort(arena, records, count);
      // Safe to publish from a reader: every writer holds the exclusive lock.
      sortedCache = sorted;
    }
    return new SortedRecords.ArrayCursor(arena, sorted, null, sorted.length);
  }
}
