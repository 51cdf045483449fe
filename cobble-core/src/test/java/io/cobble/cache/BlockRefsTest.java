package io.cobble.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Reads of cached data blocks by reference ({@link BlockRefs}): a reference exists exactly while
 * the block is cached, a block pinned by reference is never handed out for another block, an array
 * the cache reused is never taken for the block it held before, and hits by reference count for the
 * gauges and for the eviction order.
 */
class BlockRefsTest {
  private static final int FILE = 3;
  // 16 shards of 8 KiB: one shard holds one 4 KiB block plus a little.
  private final BlockCache cache = new BlockCache(16 * 8192);
  private final BlockRefs refs = new BlockRefs(1 << 16, FILE, cache);

  /** Block ordinals of the same shard as ordinal 0 (including it), in order. */
  private List<Integer> sameShard(int n) {
    List<Integer> blocks = new ArrayList<>();
    int shard = cache.shardIndex(key(0));
    for (int b = 0; blocks.size() < n; b++) {
      if (cache.shardIndex(key(b)) == shard) {
        blocks.add(b);
      }
    }
    return blocks;
  }

  /** The cache key of block ordinal {@code b}: its offset in the file. */
  private static long key(int b) {
    return BlockCache.key(FILE, b * 4096L);
  }

  /** What block {@code b}'s bytes after the reserved ones are in these tests. */
  private static byte fill(int b, int i) {
    return (byte) (b * 31 + i);
  }

  /** Reads block {@code b} through the cache, as a miss does, and releases it. */
  private byte[] readThrough(int b, int length) {
    BlockCache.Pin pin = new BlockCache.Pin();
    if (!cache.acquire(key(b), pin, refs, b)) {
      byte[] a = cache.allocate(key(b), length);
      for (int i = BlockCache.RESERVED_BYTES; i < length; i++) {
        a[i] = fill(b, i);
      }
      cache.insertPinned(key(b), a, length, pin, refs, b);
    }
    byte[] data = pin.data();
    cache.release(pin);
    return data;
  }

  @Test
  void aBlockReadThroughTheCacheIsThenReadByReferenceUntilEvicted() {
    List<Integer> blocks = sameShard(5);
    int b = blocks.get(0);
    assertTrue(refs.pin(b) == null, "never read");
    byte[] a = readThrough(b, 4000);
    long hits = cache.hits();
    byte[] pinned = refs.pin(b);
    assertSame(a, pinned);
    assertEquals(4000, BlockCache.cachedLength(pinned));
    assertEquals(hits + 1, cache.hits(), "a read by reference is a hit");
    BlockRefs.unpin(pinned);
    // The shard holds two blocks; b's hit gives it one second chance.
    for (int other : blocks.subList(1, 5)) {
      readThrough(other, 4000);
    }
    assertTrue(refs.pin(b) == null, "evicted: no reference left");
    BlockCache.Pin pin = new BlockCache.Pin();
    assertFalse(cache.acquire(key(b), pin));
  }

  @Test
  void aBlockPinnedByReferenceIsNeverHandedOutForAnotherBlock() {
    List<Integer> blocks = sameShard(40);
    int b = blocks.get(0);
    readThrough(b, 4000);
    byte[] held = refs.pin(b);
    for (int i = 1; i < blocks.size(); i++) {
      assertNotSame(held, readThrough(blocks.get(i), 4000), "reused while pinned at " + i);
    }
    for (int i = BlockCache.RESERVED_BYTES; i < 4000; i++) {
      assertEquals(fill(b, i), held[i]);
    }
    BlockRefs.unpin(held);
    for (int i = 0; i < 10; i++) {
      assertNotSame(held, cache.allocate(key(1), 4000), "evicted while pinned: dropped");
    }
  }

  @Test
  void anArrayTheCacheReusedIsNotTakenForItsFormerBlock() {
    List<Integer> blocks = sameShard(6);
    int b = blocks.get(0);
    byte[] first = readThrough(b, 4000);
    BlockRefs.unpin(refs.pin(b));
    // Evicts b unpinned (after its second chance): its array is claimed for reuse.
    for (int other : blocks.subList(1, 4)) {
      readThrough(other, 4000);
    }
    assertFalse(BlockCache.pinInPlace(first, refs.identity(b)), "claimed for reuse");
    int next = blocks.get(5);
    assertSame(first, readThrough(next, 4000), "recycled for the next block");
    assertFalse(BlockCache.pinInPlace(first, refs.identity(b)), "it holds another block now");
    byte[] now = refs.pin(next);
    assertSame(first, now);
    BlockRefs.unpin(now);
  }

  @Test
  void aHitByReferenceGivesTheBlockASecondChance() {
    List<Integer> blocks = sameShard(3);
    readThrough(blocks.get(0), 4000);
    readThrough(blocks.get(1), 4000);
    // The oldest block is hit by reference only; the third block evicts the other one.
    BlockRefs.unpin(refs.pin(blocks.get(0)));
    readThrough(blocks.get(2), 4000);
    byte[] kept = refs.pin(blocks.get(0));
    assertTrue(kept != null, "the block hit by reference stays");
    BlockRefs.unpin(kept);
    assertTrue(refs.pin(blocks.get(1)) == null, "the block not hit since is evicted");
  }

  /**
   * Readers by reference against a thread that keeps replacing the cache's blocks: every byte of
   * every block a reader pinned is that block's for as long as the pin is held.
   */
  @Test
  void pinnedBlocksKeepTheirBytesWhileTheCacheChurns() throws Exception {
    List<Integer> blocks = sameShard(12);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicLong pinnedReads = new AtomicLong();
    Thread writer =
        new Thread(
            () -> {
              SplittableRandom r = new SplittableRandom(7);
              while (!stop.get()) {
                readThrough(blocks.get(r.nextInt(blocks.size())), 2000 + r.nextInt(2000));
              }
            });
    List<Thread> readers = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      int seed = t;
      readers.add(
          new Thread(
              () -> {
                SplittableRandom r = new SplittableRandom(seed);
                try {
                  while (!stop.get()) {
                    int b = blocks.get(r.nextInt(blocks.size()));
                    byte[] a = refs.pin(b);
                    if (a == null) {
                      continue;
                    }
                    try {
                      int length = BlockCache.cachedLength(a);
                      for (int pass = 0; pass < 3; pass++) {
                        for (int i = BlockCache.RESERVED_BYTES; i < length; i++) {
                          if (a[i] != fill(b, i)) {
                            throw new AssertionError("block " + b + " changed at byte " + i);
                          }
                        }
                      }
                    } finally {
                      BlockRefs.unpin(a);
                    }
                    pinnedReads.incrementAndGet();
                  }
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                }
              }));
    }
    writer.start();
    readers.forEach(Thread::start);
    Thread.sleep(3000);
    stop.set(true);
    writer.join();
    for (Thread t : readers) {
      t.join();
    }
    if (failure.get() != null) {
      throw new AssertionError(failure.get());
    }
    assertTrue(pinnedReads.get() > 1000, "reads by reference: " + pinnedReads.get());
  }
}
