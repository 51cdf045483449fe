package io.cobble.memtable;

import io.cobble.util.Bytes;
import io.cobble.util.ValueSink;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * Point-read memtable: open addressing over record numbers. Each record's key hash is kept beside
 * its address, so a probe touches the arena only on a hash match and a rehash never reads the
 * arena. Ordered access (flush, scans) sorts a snapshot of the addresses, cached until the next
 * write. An update appends a new record linked to the version it replaces ({@link Arena#older}), so
 * a snapshot taken while the writer runs reads each key as of one moment: the newest address
 * published when it began, older versions standing in for any record appended later.
 *
 * <p>Lock-free reads (see {@link MemTable}): a new key's hash and address are written before its
 * slot is release-stored; an update release-stores the new record's address over the old one; a
 * rehash fills a new table and then publishes it, while a reader still probing the old one sees
 * every key that table held. A reader loads each slot once: the empty slot that ends its probe may
 * receive another key a moment later.
 */
public class HashMemTable extends MemTable {
  private final Arena arena = new Arena();
  private volatile int[] table = new int[1 << 12];
  private volatile long[] records = new long[1024];
  private volatile int[] hashes = new int[1024];
  // Written by the writer with release stores, read with acquire loads (see COUNT, PUBLISHED).
  private int count;
  // The newest record's address: the moment a snapshot reads as of.
  private long published = Arena.NONE;
  private volatile Sorted sorted;

  private static final VarHandle COUNT;
  private static final VarHandle PUBLISHED;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      COUNT = l.findVarHandle(HashMemTable.class, "count", int.class);
      PUBLISHED = l.findVarHandle(HashMemTable.class, "published", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  public HashMemTable(long id, RowCombiner combiner) {
    super(id, combiner);
  }

  /**
   * The slot holding {@code key} in {@code t}, or the empty slot that ends its probe; for the
   * writer only (readers use {@link #find}).
   */
  private int slot(int[] t, byte[] key, int keyLen, int hash) {
    int mask = t.length - 1;
    int i = hash & mask;
    while (true) {
      int n = (int) INTS.getAcquire(t, i);
      if (n == 0 || (hashes[n - 1] == hash && sameKey(n - 1, key, keyLen))) {
        return i;
      }
      i = (i + 1) & mask;
    }
  }

  /**
   * The record number (1-based) of {@code key}, or 0, for a reader. It keeps the slot value its
   * probe stopped at: loading that slot again could see a different key the writer just stored into
   * the empty slot that ended the probe, and return that key's row.
   */
  private int find(byte[] key, int keyLen) {
    int hash = Bytes.hash(key, 0, keyLen);
    int[] t = table;
    int mask = t.length - 1;
    int i = hash & mask;
    while (true) {
      int n = (int) INTS.getAcquire(t, i);
      if (n == 0 || (hashes[n - 1] == hash && sameKey(n - 1, key, keyLen))) {
        return n;
      }
      i = (i + 1) & mask;
    }
  }

  private boolean sameKey(int record, byte[] key, int keyLen) {
    return arena.compareKey((long) LONGS.getAcquire(records, record), key, keyLen) == 0;
  }

  /** Appends the fold of a delta onto the key's row at {@code older}; returns its address. */
  private long combined(byte[] key, int keyLen, long older, byte[] row, int rowLen) {
    byte[] combined = combiner.combine(key, arena.value(older), Arrays.copyOf(row, rowLen));
    return arena.add(key, keyLen, combined, 0, combined.length, older);
  }

  @Override
  protected void doPut(byte[] key, int keyLen, byte[] row, int rowLen, boolean replacesOlder) {
    int hash = Bytes.hash(key, 0, keyLen);
    int[] t = table;
    int s = slot(t, key, keyLen, hash);
    int n = t[s];
    long[] recs = records;
    if (n != 0) {
      long older = recs[n - 1];
      long addr =
          replacesOlder
              ? arena.add(key, keyLen, row, 0, rowLen, older)
              : combined(key, keyLen, older, row, rowLen);
      LONGS.setRelease(recs, n - 1, addr);
      PUBLISHED.setRelease(this, addr);
      return;
    }
    int c = count;
    if (c == recs.length) {
      hashes = Arrays.copyOf(hashes, c * 2);
      recs = Arrays.copyOf(recs, c * 2);
      records = recs;
    }
    hashes[c] = hash;
    long addr = arena.add(key, keyLen, row, 0, rowLen);
    recs[c] = addr;
    INTS.setRelease(t, s, c + 1);
    COUNT.setRelease(this, c + 1);
    PUBLISHED.setRelease(this, addr);
    if ((c + 1) * 2 > t.length) {
      rehash(t);
    }
  }

  private void rehash(int[] old) {
    int[] next = new int[old.length * 2];
    int mask = next.length - 1;
    int[] hs = hashes;
    for (int n : old) {
      if (n != 0) {
        int i = hs[n - 1] & mask;
        while (next[i] != 0) {
          i = (i + 1) & mask;
        }
        next[i] = n;
      }
    }
    table = next;
  }

  @Override
  protected byte[] doGet(byte[] key, int keyLen) {
    int n = find(key, keyLen);
    return n == 0 ? null : arena.value((long) LONGS.getAcquire(records, n - 1));
  }

  @Override
  protected boolean doGet(byte[] key, int keyLen, ValueSink sink) {
    int n = find(key, keyLen);
    if (n == 0) {
      return false;
    }
    arena.valueTo((long) LONGS.getAcquire(records, n - 1), sink);
    return true;
  }

  @Override
  protected long doApproximateBytes() {
    return arena.usedBytes() + (long) entryCount() * 16;
  }

  @Override
  public int entryCount() {
    return (int) COUNT.getAcquire(this);
  }

  @Override
  protected Cursor cursor() {
    // The mark first: the count read after it covers every key it published, and a record
    // appended after it is read as the version it replaced, or skipped for a new key.
    long mark = (long) PUBLISHED.getAcquire(this);
    Sorted s = sorted;
    if (s == null || s.mark != mark) {
      int c = entryCount();
      long[] recs = records;
      long[] addrs = new long[c];
      int kept = 0;
      for (int i = 0; i < c; i++) {
        long r = (long) LONGS.getAcquire(recs, i);
        while (r > mark) {
          r = arena.older(r);
        }
        if (r != Arena.NONE) {
          addrs[kept++] = r;
        }
      }
      s = new Sorted(mark, SortedRecords.sort(arena, addrs, kept));
      sorted = s;
    }
    return new SortedRecords.ArrayCursor(arena, s.addrs, null, s.addrs.length);
  }

  /** Sorted record addresses as of the newest address published then. */
  private static final class Sorted {
    final long mark;
    final long[] addrs;

    Sorted(long mark, long[] addrs) {
      this.mark = mark;
      this.addrs = addrs;
    }
  }
}
