package io.cobble;

import io.cobble.cache.BlockCache;
import io.cobble.version.Version;
import java.util.Arrays;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongUnaryOperator;

/**
 * One memory budget shared by several Dbs (for example every Cobble state backend of a Flink slot):
 * one {@link BlockCache} and one write-buffer budget for all their memtables. A Db opened with a
 * config carrying a pool ({@link Config.Builder#memoryPool}) caches its blocks in the pool's cache,
 * under ids the pool hands out so that equal file numbers of different Dbs never share a key, and
 * charges its memtables (active and sealed) to the write budget.
 *
 * <p>The write budget is kept as RocksDB's {@code WriteBufferManager} keeps it: when the active
 * memtables of all members reach 7/8 of it, or all memtables reach it while the active ones hold at
 * least half, the largest active memtable is sealed and flushed; when all memtables reach it,
 * writers wait until flushes free memory. A writer checks before each write, so the memtables
 * exceed the budget by at most one write per member.
 *
 * <p>What the memtables leave of the write budget, less one step of headroom, is {@link
 * BlockCache#lend lent} to the cache in steps of a sixteenth of the budget, as RocksDB's block
 * cache holds what its {@code WriteBufferManager}'s memtables do not: a Db that is read and seldom
 * written caches up to the whole pool. The loan is recomputed at each write's check, after each
 * flush and when a Db joins or leaves; the writer whose memtables cross a step shrinks it, and the
 * cache evicts before that memory is written, so memtables and cache together stay within the pool.
 */
public final class MemoryPool {
  // Cache keys hold 24 bits of table id (see BlockCache#key).
  private static final long CACHE_ID_MASK = (1L << 24) - 1;

  private final long writeBufferBytes;
  private final BlockCache cache;
  private final long cacheBytes;
  private final long lendStep;
  // Replaced on join and leave, so a writer's check walks a plain array and allocates nothing.
  private volatile Member[] members = new Member[0];
  private final AtomicLong nextCacheId = new AtomicLong();
  private final LongUnaryOperator cacheIds =
      fileNumber -> nextCacheId.getAndIncrement() & CACHE_ID_MASK;

  /**
   * A pool of {@code writeBufferBytes} for the memtables of its Dbs and {@code blockCacheBytes} for
   * their cached blocks.
   */
  public MemoryPool(long writeBufferBytes, long blockCacheBytes) {
    if (writeBufferBytes <= 0 || blockCacheBytes < 0) {
      throw new IllegalArgumentException(
          "a memory pool needs a positive write buffer budget and a non-negative block cache size,"
              + " got "
              + writeBufferBytes
              + " and "
              + blockCacheBytes);
    }
    this.writeBufferBytes = writeBufferBytes;
    this.cacheBytes = blockCacheBytes;
    this.cache = new BlockCache(blockCacheBytes);
    this.lendStep = Math.max(1, writeBufferBytes / 16);
  }

  /** The budget for the memtables of all member Dbs. */
  public long writeBufferBytes() {
    return writeBufferBytes;
  }

  /** The capacity of the shared block cache. */
  public long blockCacheBytes() {
    return cacheBytes;
  }

  /** Bytes held by the memtables (active and sealed) of all member Dbs. */
  public long memtableUsage() {
    long used = 0;
    for (Member m : members) {
      Version v = m.shard.current();
      used += v.active().approximateBytes() + v.sealedBytes();
    }
    return used;
  }

  /** Write-budget bytes the memtables leave idle, lent to the cache beyond its capacity. */
  public long lentToCache() {
    return cache.lent();
  }

  /**
   * Lends the cache what memtables holding {@code memtables} bytes leave of the write budget, less
   * one step of headroom, rounded down to whole steps (so the cache resizes once per step). A
   * changed loan is recomputed under the lock from the members' memtables as they are then, so a
   * caller's stale figure (a flush thread's, while another member writes) is never the last word.
   */
  private void lendIdle(long memtables) {
    if (cacheBytes > 0 && loan(memtables) != cache.lent()) {
      synchronized (this) {
        long loan = loan(memtableUsage());
        if (loan != cache.lent()) {
          cache.lend(loan);
        }
      }
    }
  }

  private long loan(long memtables) {
    long idle = writeBufferBytes - memtables - lendStep;
    return idle <= 0 ? 0 : idle / lendStep * lendStep;
  }

  /** Bytes of blocks in the shared cache. */
  public long blockCacheUsage() {
    return cache.usage();
  }

  /** Dbs open on the pool. */
  public int members() {
    return members.length;
  }

  BlockCache cache() {
    return cache;
  }

  /** Maps each table a member opens to a cache id no other open table of the pool uses. */
  LongUnaryOperator cacheIds() {
    return cacheIds;
  }

  Member join(Shard shard) {
    Member m = new Member(shard);
    synchronized (this) {
      Member[] grown = Arrays.copyOf(members, members.length + 1);
      grown[members.length] = m;
      members = grown;
    }
    lendIdle(memtableUsage());
    return m;
  }

  /**
   * Whether {@code self}, about to write, may go ahead; may seal and flush the largest active
   * memtable of the pool first. Called under {@code self}'s mutex, so another member's memtable is
   * sealed on that member's flush thread, never under this mutex.
   */
  boolean admit(Member self) {
    long active = 0;
    long total = 0;
    Member largest = null;
    long largestBytes = 0;
    for (Member m : members) {
      Version v = m.shard.current();
      long a = v.active().approximateBytes();
      active += a;
      total += a + v.sealedBytes();
      if (a > largestBytes) {
        largest = m;
        largestBytes = a;
      }
    }
    lendIdle(total);
    boolean flush =
        active >= writeBufferBytes / 8 * 7
            || (total >= writeBufferBytes && active >= writeBufferBytes / 2);
    if (flush && largest != null) {
      if (largest == self) {
        // Sealed bytes stay charged until their flush ends, so the total does not change here.
        self.shard.rotateIfRoom();
      } else {
        largest.requestRotation();
      }
    }
    return total < writeBufferBytes;
  }

  /**
   * A member's flush freed memory: wakes the writers of all members that wait for the pool. A
   * member whose mutex is busy is skipped rather than waited for (its writers recheck within their
   * bounded wait), so this never blocks a flush thread on another Db.
   */
  void freed() {
    lendIdle(memtableUsage());
    for (Member m : members) {
      m.shard.wakeWriters();
    }
  }

  /**
   * What the pool needs of a member Db (kept to an interface so the pool knows no Db internals).
   */
  interface Shard {
    /** The Db's current version: its active and sealed memtables. */
    Version current();

    /** Seals the active memtable when it holds data and there is room; under the Db's mutex. */
    void rotateIfRoom();

    /**
     * On the Db's flush thread: runs {@code started}, then {@link #rotateIfRoom} under the Db's
     * mutex unless the Db has closed.
     *
     * @throws RejectedExecutionException when the Db is closing
     */
    void rotateOnFlushThread(Runnable started);

    /** Wakes the Db's writers waiting for room, unless its mutex is busy (never blocks). */
    void wakeWriters();
  }

  /** A Db charging its memtables to the pool. */
  final class Member {
    private final Shard shard;
    private final AtomicBoolean rotationRequested = new AtomicBoolean();

    private Member(Shard shard) {
      this.shard = shard;
    }

    /** Seals this Db's active memtable on its flush thread (at most one request pending). */
    private void requestRotation() {
      if (rotationRequested.compareAndSet(false, true)) {
        try {
          shard.rotateOnFlushThread(() -> rotationRequested.set(false));
        } catch (RejectedExecutionException closing) {
          // The Db is closing: its close flushes the memtable and leaves the pool.
          rotationRequested.set(false);
        }
      }
    }

    /** Returns the Db's share: called when it closes, after its memtables were flushed. */
    void leave() {
      synchronized (MemoryPool.this) {
        Member[] now = members;
        for (int i = 0; i < now.length; i++) {
          if (now[i] == this) {
            Member[] shrunk = Arrays.copyOf(now, now.length - 1);
            System.arraycopy(now, i + 1, shrunk, i, now.length - i - 1);
            members = shrunk;
            break;
          }
        }
      }
      lendIdle(memtableUsage());
    }
  }
}
