package io.cobble.memtable;

import io.cobble.MemTableType;
import io.cobble.iterator.KvIterator;
import io.cobble.util.ValueSink;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * Memtable that picks its index from the observed operation mix.
 *
 * <p>Rules (see {@link #choose}): the type of a new memtable comes from the mix seen by the
 * previous one: any noticeable scanning (scans ≥ 1% of operations) needs order, so skiplist; else
 * point reads (gets ≥ 1%) favour hash, whose probe beats a skiplist's pointer chase at any read
 * share (measured: a reader next to a full-speed writer ran 2.2× faster on hash than on skiplist);
 * else reads that only add up to 1% with some scans among them use skiplist, which serves both;
 * else an (almost) write-only stream (reads &lt; 1%) uses vec.
 *
 * <p>Within a memtable, a point read never changes anything but the counts: every type answers it
 * without ordering anything (vec builds a hash index on its first get and keeps it up from then
 * on), so a get after a long write-only phase costs one pass over the records, then what any get
 * costs. Only the first user scan of an active vec or hash memtable converts it to a skiplist,
 * because later scans would otherwise sort the whole memtable again after every write; the
 * conversion sorts once (radix sort for the usual fixed-width keys) and links the sorted rows in
 * one pass. A sealed memtable is never converted: the flush thread sorts it once, and that sorted
 * view also serves its scans. A large vec memtable whose writes stop when scans start is sealed
 * instead, when its Db allows ({@link #sealForScans}): a skiplist of tens of megabytes costs a
 * short scan three dependent cache misses per level of its seek, where the table the flush writes
 * costs a few.
 *
 * <p>An iterator keeps reading the index it was created on, as of its creation: a conversion fills
 * a new index and leaves the old one untouched, and writes after it go to the new one only. A
 * conversion runs on the scanning thread and must not overlap a put, so it takes the lock the
 * writer holds around every put: the Db's shard mutex, which the Db hands in, so a put takes no
 * lock of its own; a memtable used without one locks its own lock per put.
 */
public final class AdaptiveMemTable extends MemTable {
  private static final VarHandle WRITES;

  static {
    try {
      WRITES = MethodHandles.lookup().findVarHandle(AdaptiveMemTable.class, "writes", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  // Counted by the single writer; opaque, as nextType may read it from another thread.
  private long writes;
  private final LongAdder gets = new LongAdder();
  private final LongAdder scans = new LongAdder();
  private volatile MemTable delegate;
  private volatile MemTableType type;
  private volatile boolean sealed;
  private final Lock writerLock;
  private final boolean lockPerPut;
  // Under writerLock.
  private int conversions;
  // Asked to seal this memtable once scans find it at least sealForScansBytes large and unwritten.
  private Predicate<MemTable> sealForScans;
  private long sealForScansBytes = Long.MAX_VALUE;
  // The records the memtable held when a scan first read its sorted view instead of converting;
  // -1 before.
  private volatile int viewedAt = -1;

  public AdaptiveMemTable(long id, RowCombiner combiner, MemTableType initial) {
    this(id, combiner, initial, 0);
  }

  /** Starting as a vec memtable, its index has room for {@code expectedEntries} records. */
  public AdaptiveMemTable(
      long id, RowCombiner combiner, MemTableType initial, int expectedEntries) {
    this(id, combiner, initial, expectedEntries, new ReentrantLock(), true);
  }

  /**
   * As {@link #AdaptiveMemTable(long, RowCombiner, MemTableType, int)} for a writer that holds
   * {@code writerLock} around every put, which conversions then take instead of a lock per put.
   */
  public AdaptiveMemTable(
      long id, RowCombiner combiner, MemTableType initial, int expectedEntries, Lock writerLock) {
    this(id, combiner, initial, expectedEntries, writerLock, false);
  }

  private AdaptiveMemTable(
      long id,
      RowCombiner combiner,
      MemTableType initial,
      int expectedEntries,
      Lock writerLock,
      boolean lockPerPut) {
    super(id, combiner);
    this.writerLock = writerLock;
    this.lockPerPut = lockPerPut;
    this.type = initial;
    this.delegate =
        initial == MemTableType.VEC
            ? new VecMemTable(id, combiner, expectedEntries)
            : create(initial);
  }

  private MemTable create(MemTableType t) {
    switch (t) {
      case HASH:
        return new HashMemTable(id(), combiner);
      case VEC:
        return new VecMemTable(id(), combiner);
      default:
        return new SkipListMemTable(id(), combiner);
    }
  }

  /** The type to start the next memtable with, from this one's operation counts. */
  public static MemTableType choose(long writes, long gets, long scans) {
    long total = writes + gets + scans;
    if (total == 0) {
      return MemTableType.SKIPLIST;
    }
    if (scans * 100 >= total) {
      return MemTableType.SKIPLIST;
    }
    if (gets * 100 >= total) {
      return MemTableType.HASH;
    }
    if ((gets + scans) * 100 >= total) {
      return MemTableType.SKIPLIST;
    }
    return MemTableType.VEC;
  }

  public MemTableType nextType() {
    return choose((long) WRITES.getOpaque(this), gets.sum(), scans.sum());
  }

  public MemTableType currentType() {
    return type;
  }

  /**
   * Lets scans of this memtable, while it is unordered and holds at least {@code minBytes}, read
   * its sorted view and, once writes have paused, ask {@code sealer} to seal it (true when it did)
   * instead of converting it to a skiplist (see {@link #readsSortedView}). The flush reuses the
   * sorted view, and later scans find the rows in the table it writes. Before the memtable is
   * shared.
   */
  public void sealForScans(long minBytes, Predicate<MemTable> sealer) {
    this.sealForScansBytes = minBytes;
    this.sealForScans = sealer;
  }

  /** Converts to a skiplist, loading the current sorted rows in order. */
  private void convertToSkipList() {
    writerLock.lock();
    try {
      // Sealed meanwhile: the flush may be sorting the current index.
      if (type == MemTableType.SKIPLIST || sealed) {
        return;
      }
      SkipListMemTable next = new SkipListMemTable(id(), combiner);
      next.loadSorted(delegate.cursor());
      delegate = next;
      type = MemTableType.SKIPLIST;
      conversions++;
    } finally {
      writerLock.unlock();
    }
  }

  /** How many times this memtable converted its index (for tests: gets never convert). */
  int conversions() {
    writerLock.lock();
    try {
      return conversions;
    } finally {
      writerLock.unlock();
    }
  }

  MemTable delegate() {
    return delegate;
  }

  /** An immutable memtable is sorted once (by the flush) instead of being converted. */
  @Override
  public void seal() {
    sealed = true;
    delegate.seal();
  }

  @Override
  protected void doPut(byte[] key, int keyLen, byte[] row, int rowLen, boolean replacesOlder) {
    if (!lockPerPut) {
      write(key, keyLen, row, rowLen, replacesOlder);
      return;
    }
    writerLock.lock();
    try {
      write(key, keyLen, row, rowLen, replacesOlder);
    } finally {
      writerLock.unlock();
    }
  }

  private void write(byte[] key, int keyLen, byte[] row, int rowLen, boolean replacesOlder) {
    WRITES.setOpaque(this, writes + 1);
    delegate.doPut(key, keyLen, row, rowLen, replacesOlder);
  }

  @Override
  public byte[] get(byte[] key, int keyLen) {
    gets.increment();
    return super.get(key, keyLen);
  }

  @Override
  public boolean get(byte[] key, int keyLen, ValueSink sink) {
    gets.increment();
    return super.get(key, keyLen, sink);
  }

  /** An iterator for a user scan; flush and compaction use {@link #iterator()} and do not count. */
  public KvIterator scanIterator() {
    scans.increment();
    if (type != MemTableType.SKIPLIST && !sealed && !readsSortedView()) {
      convertToSkipList();
    }
    return super.iterator();
  }

  /**
   * Whether the scan reads the current vec index's sorted view instead of converting it: true for
   * the first scan of a memtable large enough for {@link #sealForScans}, and for a later one when
   * no write came since, the writes having paused; that one also asks the Db to seal the memtable,
   * and if there is no room yet (the memtable sealed before it is still being flushed), a later
   * scan asks again. A scan after a write converts, so a memtable that is written between scans is
   * sorted at most once more than before, and only one whose writes stop is sealed early.
   */
  private boolean readsSortedView() {
    if (sealForScans == null
        || !(delegate instanceof VecMemTable)
        || delegate.doApproximateBytes() < sealForScansBytes) {
      return false;
    }
    int entries = delegate.entryCount();
    int viewed = viewedAt;
    if (viewed == -1) {
      viewedAt = entries;
      return true;
    }
    if (viewed != entries) {
      return false;
    }
    sealForScans.test(this);
    return true;
  }

  @Override
  protected byte[] doGet(byte[] key, int keyLen) {
    return delegate.doGet(key, keyLen);
  }

  @Override
  protected boolean doGet(byte[] key, int keyLen, ValueSink sink) {
    return delegate.doGet(key, keyLen, sink);
  }

  @Override
  protected long doApproximateBytes() {
    return delegate.doApproximateBytes();
  }

  @Override
  public int entryCount() {
    return delegate.entryCount();
  }

  @Override
  protected Cursor cursor() {
    return delegate.cursor();
  }
}
