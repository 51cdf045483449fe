package io.cobble.memtable;

import io.cobble.util.Bytes;
import io.cobble.util.ValueSink;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;

/**
 * Write-burst memtable: every delta is appended without looking anything up or folding it. Point
 * reads go through a chained hash index (a bucket head per slot and, per record, a link to the
 * bucket's previous record: longs only, each a {@link RecordRef} with a hash tag and the record's
 * address), so a get never needs key order; it walks its bucket newest first and folds the key's
 * deltas it finds. Ordered access (flush, scans) sorts a snapshot and folds equal keys; the flush
 * thread does that for a sealed memtable, and the sorted snapshot is kept while nothing is
 * appended. The writer notes which key bytes vary ({@link KeyShape}) as it appends, so the flush's
 * sort packs those bytes without a first pass over the arena to find them.
 *
 * <p>The index is built on the first get, not by the appends: linking a record into a bucket of a
 * large index is a cache miss per put, and a memtable that is never read by key (a SQL sink's)
 * would pay it for nothing. Until then a put appends the record's address and nothing else.
 *
 * <p>Lock-free reads (see {@link MemTable}). The writer stores a record's address into {@code
 * records} (grown by copy, published through a volatile field before the next address goes into it)
 * and then release-stores the count, so a reader that acquires the count and then loads {@code
 * records} finds every counted address. The index is handed over once, from reader to writer:
 *
 * <ol>
 *   <li>The first get finds {@code index} null, builds a private index over the records counted so
 *       far (re-reading the count until it stops moving, a few rounds at most), sets its {@code
 *       indexed} to the records it linked and publishes it with a compare-and-set from null; a
 *       reader that loses the race uses the winner's and drops its own.
 *   <li>From then on only the writer changes the published index. Each put that finds it links the
 *       records appended since {@code indexed} (the ones it put before it saw the index), then its
 *       own; a record's link is written before its bucket head is release-stored, {@code indexed}
 *       is release-stored after the heads and before the count. A full index is replaced by a copy
 *       of twice the capacity, published before the next record goes into it, so a reader walks the
 *       index it loaded, whose heads reach only records it holds.
 *   <li>A get acquires the count {@code c}, then loads {@code records}, the index and its {@code
 *       indexed} {@code n}. Records below {@code min(n, c)} are all on the chains; the gap between
 *       that and {@code c} (only the records a put appended before it saw a just-published index)
 *       is scanned newest first; chain entries at or above the bound are skipped, since the gap
 *       scan (or the count) covers them. So a get sees every put that completed before it and never
 *       reads an address beyond the records array it loaded.
 * </ol>
 */
public class VecMemTable extends MemTable {
  private static final VarHandle COUNT;
  private static final VarHandle SORTS;
  private static final VarHandle INDEX;
  private static final VarHandle INDEXED;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      COUNT = l.findVarHandle(VecMemTable.class, "count", int.class);
      SORTS = l.findVarHandle(VecMemTable.class, "sorts", int.class);
      INDEX = l.findVarHandle(VecMemTable.class, "index", Index.class);
      INDEXED = l.findVarHandle(Index.class, "indexed", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  // The largest index or address array a memtable starts with.
  private static final int MAX_PRESIZE = 1 << 22;
  private static final int MIN_CAPACITY = 1024;
  // Rounds a first get spends catching up with a running writer before it publishes the index.
  private static final int BUILD_ROUNDS = 4;

  private final Arena arena = new Arena();
  private final int expectedEntries;
  private final int buildRounds;
  private volatile long[] records;
  private volatile Index index;
  private int count;
  private int sorts;
  private volatile Snapshot snapshot;
  // The appended keys' varying bytes, gathered by the writer; the sort reads it once sealed.
  private final KeyShape shape = new KeyShape();
  private volatile boolean sealed;

  public VecMemTable(long id, RowCombiner combiner) {
    this(id, combiner, 0);
  }

  /**
   * A memtable whose address array, and index once a get builds it, start with room for {@code
   * expectedEntries} records (the size the shard's last memtable reached): growing the index
   * rehashes every record with a cache miss each.
   */
  public VecMemTable(long id, RowCombiner combiner, int expectedEntries) {
    this(id, combiner, expectedEntries, BUILD_ROUNDS);
  }

  /**
   * As above, with the first get catching up with a running writer for {@code buildRounds} rounds
   * before it publishes the index (tests pass 0 so gets find the unlinked records the writer has
   * not yet caught up on much more often).
   */
  VecMemTable(long id, RowCombiner combiner, int expectedEntries, int buildRounds) {
    super(id, combiner);
    this.expectedEntries = expectedEntries;
    this.buildRounds = buildRounds;
    this.records = new long[capacityFor(expectedEntries)];
  }

  private static int capacityFor(int entries) {
    if (entries <= MIN_CAPACITY) {
      return MIN_CAPACITY;
    }
    return Integer.highestOneBit(Math.min(entries, MAX_PRESIZE) - 1) << 1;
  }

  @Override
  protected void doPut(byte[] key, int keyLen, byte[] row, int rowLen, boolean replacesOlder) {
    int c = count;
    long[] recs = records;
    if (c == recs.length) {
      recs = Arrays.copyOf(recs, c * 2);
      records = recs;
    }
    long addr = arena.add(key, keyLen, row, 0, rowLen);
    recs[c] = replacesOlder ? addr | Arena.REPLACES_OLDER : addr;
    shape.add(key, 0, keyLen);
    Index ix = index;
    if (ix != null) {
      ix = linkUpTo(ix, recs, c);
      ix.link(c, Bytes.hash(key, 0, keyLen), recs[c]);
      INDEXED.setRelease(ix, c + 1);
    }
    COUNT.setRelease(this, c + 1);
  }

  /**
   * Links records [ix.indexed, upTo) of {@code recs} into {@code ix} (hashing their keys in the
   * arena) and makes room for record {@code upTo}; returns the index to keep linking into, which is
   * published when it replaced a full one and {@code ix} was.
   */
  private Index linkUpTo(Index ix, long[] recs, int upTo) {
    int from = ix.indexed;
    for (int i = from; i <= upTo; i++) {
      if (i == ix.heads.length) {
        boolean published = index == ix;
        ix = ix.grow(i, recs, arena);
        if (published) {
          index = ix;
        }
      }
      if (i < upTo) {
        ix.link(i, arena.hashKey(recs[i]), recs[i]);
      }
    }
    return ix;
  }

  /**
   * The published index, built by this call when no get has built it yet (see the class comment).
   */
  private Index index() {
    Index ix = index;
    if (ix != null) {
      return ix;
    }
    int c = entryCount();
    long[] recs = records;
    Index built = new Index(capacityFor(Math.max(c, expectedEntries)));
    for (int round = 0; ; round++) {
      built = linkUpTo(built, recs, c);
      built.indexed = c;
      int now = entryCount();
      if (now == c || round >= buildRounds) {
        break;
      }
      c = now;
      recs = records;
    }
    if (INDEX.compareAndSet(this, null, built)) {
      return built;
    }
    return index;
  }

  @Override
  public void seal() {
    sealed = true;
  }

  /** Whether a get has built the point-read index (for tests: puts alone never do). */
  boolean indexed() {
    return index != null;
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
    // Once sealed, every put happened before this read of the writer's shape.
    long[] sorted = SortedRecords.sortPacked(arena, records, count, sealed ? shape : null);
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
    SortedRecords.release(sorted);
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
    int c = entryCount();
    long[] recs = records;
    Index ix = index();
    int bound = Math.min((int) INDEXED.getAcquire(ix), c);
    int hash = Bytes.hash(key, 0, keyLen);
    long newest = newestBelow(ix, recs, bound, c, hash, key, keyLen);
    if (newest == RecordRef.NONE) {
      return null;
    }
    long addr = address(newest, recs);
    if ((addr & Arena.REPLACES_OLDER) != 0
        || olderMatch(ix, recs, bound, newest, hash, key, keyLen) == RecordRef.NONE) {
      return arena.value(addr);
    }
    return fold(ix, recs, bound, newest, hash, key, keyLen);
  }

  @Override
  protected boolean doGet(byte[] key, int keyLen, ValueSink sink) {
    int c = entryCount();
    long[] recs = records;
    Index ix = index();
    int bound = Math.min((int) INDEXED.getAcquire(ix), c);
    int hash = Bytes.hash(key, 0, keyLen);
    long newest = newestBelow(ix, recs, bound, c, hash, key, keyLen);
    if (newest == RecordRef.NONE) {
      return false;
    }
    long addr = address(newest, recs);
    if ((addr & Arena.REPLACES_OLDER) != 0
        || olderMatch(ix, recs, bound, newest, hash, key, keyLen) == RecordRef.NONE) {
      arena.valueTo(addr, sink);
    } else {
      byte[] row = fold(ix, recs, bound, newest, hash, key, keyLen);
      sink.accept(row, 0, row.length);
    }
    return true;
  }

  /**
   * The newest record of the key below record number {@code end} (at least {@code bound}), or
   * {@link RecordRef#NONE}. Records from {@code bound} up are not (all) linked yet and are scanned;
   * older ones are found on the key's chain, which the walk enters at the bucket head, skipping
   * entries at or above the bound (newer than {@code end}, or covered by the scan).
   */
  private long newestBelow(
      Index ix, long[] recs, int bound, int end, int hash, byte[] key, int keyLen) {
    for (int i = end - 1; i >= bound; i--) {
      if (arena.compareKey(recs[i], key, keyLen) == 0) {
        return RecordRef.of(i + 1, hash, recs[i]);
      }
    }
    long ref = (long) LONGS.getAcquire(ix.heads, hash & (ix.heads.length - 1));
    while (RecordRef.number(ref) > bound) {
      ref = ix.links[RecordRef.number(ref) - 1];
    }
    return chainMatch(ix, recs, ref, hash, key, keyLen);
  }

  /**
   * The newest record of the key older than its record {@code newer}, or {@link RecordRef#NONE}.
   */
  private long olderMatch(
      Index ix, long[] recs, int bound, long newer, int hash, byte[] key, int keyLen) {
    int i = RecordRef.number(newer) - 1;
    if (i >= bound) {
      return newestBelow(ix, recs, bound, i, hash, key, keyLen);
    }
    return chainMatch(ix, recs, ix.links[i], hash, key, keyLen);
  }

  /**
   * The first record of the key on the bucket chain that starts at {@code ref}, or {@link
   * RecordRef#NONE}. An entry whose tag rules the key out is passed without touching its record.
   */
  private long chainMatch(Index ix, long[] recs, long ref, int hash, byte[] key, int keyLen) {
    while (ref != RecordRef.NONE) {
      if (RecordRef.mayMatch(ref, hash) && arena.compareKey(address(ref, recs), key, keyLen) == 0) {
        return ref;
      }
      ref = ix.links[RecordRef.number(ref) - 1];
    }
    return RecordRef.NONE;
  }

  /** The address (with its replaces-older flag) of the record {@code ref} refers to. */
  private static long address(long ref, long[] recs) {
    long addr = RecordRef.address(ref);
    return addr != Arena.NONE ? addr : recs[RecordRef.number(ref) - 1];
  }

  /**
   * Folds the key's deltas from the newest one that replaces its older ones (or the oldest) up to
   * record {@code newest}: only a key written more than once since its last replacing write gets
   * here, and the fold allocates its result like the combiner does on write elsewhere.
   */
  private byte[] fold(
      Index ix, long[] recs, int bound, long newest, int hash, byte[] key, int keyLen) {
    int[] chain = new int[8];
    int k = 0;
    long ref = newest;
    while (ref != RecordRef.NONE) {
      if (k == chain.length) {
        chain = Arrays.copyOf(chain, k * 2);
      }
      int i = RecordRef.number(ref) - 1;
      chain[k++] = i;
      if ((recs[i] & Arena.REPLACES_OLDER) != 0) {
        break;
      }
      ref = olderMatch(ix, recs, bound, ref, hash, key, keyLen);
    }
    byte[] k0 = keyLen == key.length ? key : Arrays.copyOf(key, keyLen);
    byte[] row = arena.value(recs[chain[k - 1]]);
    for (int j = k - 2; j >= 0; j--) {
      row = combiner.combine(k0, row, arena.value(recs[chain[j]]));
    }
    return Objects.requireNonNull(row, "RowCombiner returned null: it must return the folded row");
  }

  @Override
  protected long doApproximateBytes() {
    // Per record: its address (8 B), and once a get built the index its chain link (8 B) and about
    // one bucket head (8 B).
    return arena.usedBytes() + (long) entryCount() * (index == null ? 8 : 24);
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
   * The hash index over the first {@code indexed} records: {@code heads[b]} refers to the newest
   * record of bucket b and {@code links[i]} to the record before record i in its bucket ({@link
   * RecordRef}s, {@link RecordRef#NONE} for none). There are as many buckets as records fit, so a
   * chain holds about one record on average, and a get of a key at its bucket's head loads the head
   * and the record.
   */
  private static final class Index {
    final long[] links;
    final long[] heads;
    int indexed;

    Index(int capacity) {
      links = new long[capacity];
      heads = new long[capacity];
    }

    /** Links record {@code i} (below the capacity, at {@code addr}) at the head of its bucket. */
    void link(int i, int hash, long addr) {
      int bucket = hash & (heads.length - 1);
      links[i] = heads[bucket];
      LONGS.setRelease(heads, bucket, RecordRef.of(i + 1, hash, addr));
    }

    /**
     * A copy with twice the capacity holding the first {@code count} records of {@code recs},
     * chains rebuilt (their hashes read from {@code arena}, in address order).
     */
    Index grow(int count, long[] recs, Arena arena) {
      Index next = new Index(heads.length * 2);
      int mask = next.heads.length - 1;
      for (int i = 0; i < count; i++) {
        int hash = arena.hashKey(recs[i]);
        int bucket = hash & mask;
        next.links[i] = next.heads[bucket];
        next.heads[bucket] = RecordRef.of(i + 1, hash, recs[i]);
      }
      next.indexed = count;
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
