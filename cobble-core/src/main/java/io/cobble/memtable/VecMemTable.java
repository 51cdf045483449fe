package io.cobble.memtable;

import io.cobble.util.Bytes;
import io.cobble.util.ValueSink;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;

/**
 * Write-burst memtable: every delta is appended without looking anything up or folding it. Point
 * reads go through a chained hash index that the append keeps (a bucket head per slot and, per
 * record, its key hash and the bucket's previous record: ints only, no arena access), so a get
 * never needs key order; it walks its bucket newest first and folds the key's deltas it finds.
 * Ordered access (flush, scans) sorts a snapshot and folds equal keys; the flush thread does that
 * for a sealed memtable, and the sorted snapshot is kept while nothing is appended.
 *
 * <p>Lock-free reads (see {@link MemTable}): a record's address, hash and bucket link are written
 * before the bucket head is release-stored; the count is release-stored after it, so a snapshot of
 * the first {@code count} addresses is complete. A full index is replaced by a copy of twice the
 * capacity, published before the next record goes into it, so a reader walks the index it loaded,
 * which holds every record its heads reach.
 */
public class VecMemTable extends MemTable {
  private static final VarHandle COUNT;
  private static final VarHandle SORTS;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      COUNT = l.findVarHandle(VecMemTable.class, "count", int.class);
      SORTS = l.findVarHandle(VecMemTable.class, "sorts", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Arena arena = new Arena();
  private volatile Index index = new Index(1024);
  // The largest index a memtable starts with (24 B per record).
  private static final int MAX_PRESIZE = 1 << 22;
  private int count;
  private int sorts;
  private volatile Snapshot snapshot;

  public VecMemTable(long id, RowCombiner combiner) {
    super(id, combiner);
  }

  /**
   * A memtable whose index starts with room for {@code expectedEntries} records (the size the
   * shard's last memtable reached): growing the index doubles its arrays and rehashes every record
   * with a cache miss each, the hottest line of a sink writer's memtable puts.
   */
  public VecMemTable(long id, RowCombiner combiner, int expectedEntries) {
    super(id, combiner);
    if (expectedEntries > index.records.length) {
      index = new Index(Integer.highestOneBit(Math.min(expectedEntries, MAX_PRESIZE) - 1) << 1);
    }
  }

  @Override
  protected void doPut(byte[] key, int keyLen, byte[] row, int rowLen, boolean replacesOlder) {
    int hash = Bytes.hash(key, 0, keyLen);
    Index ix = index;
    int c = count;
    if (c == ix.records.length) {
      ix = ix.grow(c);
      index = ix;
    }
    long addr = arena.add(key, keyLen, row, 0, rowLen);
    ix.records[c] = replacesOlder ? addr | Arena.REPLACES_OLDER : addr;
    int bucket = hash & (ix.heads.length - 1);
    ix.links[2 * c] = hash;
    ix.links[2 * c + 1] = ix.heads[bucket];
    INTS.setRelease(ix.heads, bucket, c + 1);
    COUNT.setRelease(this, c + 1);
  }

  /** How many times a sorted snapshot was built (for tests: gets never build one). */
  int sorts() {
    return (int) SORTS.getAcquire(this);
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
      SORTS.setRelease(this, sorts + 1);
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
    long[] sorted = SortedRecords.sortPacked(arena, index.records, count);
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
    Index ix = index;
    int hash = Bytes.hash(key, 0, keyLen);
    int n = (int) INTS.getAcquire(ix.heads, hash & (ix.heads.length - 1));
    int newest = match(ix, n, hash, key, keyLen);
    if (newest < 0) {
      return null;
    }
    long addr = ix.records[newest];
    if ((addr & Arena.REPLACES_OLDER) != 0
        || match(ix, ix.links[2 * newest + 1], hash, key, keyLen) < 0) {
      return arena.value(addr);
    }
    return fold(ix, newest, hash, key, keyLen);
  }

  @Override
  protected boolean doGet(byte[] key, int keyLen, ValueSink sink) {
    Index ix = index;
    int hash = Bytes.hash(key, 0, keyLen);
    int n = (int) INTS.getAcquire(ix.heads, hash & (ix.heads.length - 1));
    int newest = match(ix, n, hash, key, keyLen);
    if (newest < 0) {
      return false;
    }
    long addr = ix.records[newest];
    if ((addr & Arena.REPLACES_OLDER) != 0
        || match(ix, ix.links[2 * newest + 1], hash, key, keyLen) < 0) {
      arena.valueTo(addr, sink);
    } else {
      byte[] row = fold(ix, newest, hash, key, keyLen);
      sink.accept(row, 0, row.length);
    }
    return true;
  }

  /**
   * The first record of the key on the bucket chain that starts at record number {@code n}
   * (1-based, 0 ends the chain), or -1.
   */
  private int match(Index ix, int n, int hash, byte[] key, int keyLen) {
    while (n != 0) {
      int i = n - 1;
      if (ix.links[2 * i] == hash && arena.compareKey(ix.records[i], key, keyLen) == 0) {
        return i;
      }
      n = ix.links[2 * i + 1];
    }
    return -1;
  }

  /**
   * Folds the key's deltas from the newest one that replaces its older ones (or the oldest) up to
   * record {@code newest}: only a key written more than once since its last replacing write gets
   * here, and the fold allocates its result like the combiner does on write elsewhere.
   */
  private byte[] fold(Index ix, int newest, int hash, byte[] key, int keyLen) {
    int[] chain = new int[8];
    int k = 0;
    int i = newest;
    while (i >= 0) {
      if (k == chain.length) {
        chain = Arrays.copyOf(chain, k * 2);
      }
      chain[k++] = i;
      if ((ix.records[i] & Arena.REPLACES_OLDER) != 0) {
        break;
      }
      i = match(ix, ix.links[2 * i + 1], hash, key, keyLen);
    }
    byte[] k0 = keyLen == key.length ? key : Arrays.copyOf(key, keyLen);
    byte[] row = arena.value(ix.records[chain[k - 1]]);
    for (int j = k - 2; j >= 0; j--) {
      row = combiner.combine(k0, row, arena.value(ix.records[chain[j]]));
    }
    return Objects.requireNonNull(row, "RowCombiner returned null: it must return the folded row");
  }

  @Override
  protected long doApproximateBytes() {
    // Per record: its address (8 B), its hash and chain link (8 B) and about one bucket head (4 B).
    return arena.usedBytes() + (long) entryCount() * 20;
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
   * Record addresses and the hash index over them, sized together: {@code records[i]} is record i's
   * address, {@code links[2i]} its key hash and {@code links[2i + 1]} the number (1-based, 0 for
   * none) of the record before it in its bucket, {@code heads[b]} the newest record of bucket b.
   * There are as many buckets as records fit, so a chain holds about one record on average.
   */
  private static final class Index {
    final long[] records;
    final int[] links;
    final int[] heads;

    Index(int capacity) {
      records = new long[capacity];
      links = new int[2 * capacity];
      heads = new int[capacity];
    }

    /** A copy with twice the capacity holding the first {@code count} records, chains rebuilt. */
    Index grow(int count) {
      Index next = new Index(records.length * 2);
      System.arraycopy(records, 0, next.records, 0, count);
      int mask = next.heads.length - 1;
      for (int i = 0; i < count; i++) {
        int hash = links[2 * i];
        int bucket = hash & mask;
        next.links[2 * i] = hash;
        next.links[2 * i + 1] = next.heads[bucket];
        next.heads[bucket] = i + 1;
      }
      return next;
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
