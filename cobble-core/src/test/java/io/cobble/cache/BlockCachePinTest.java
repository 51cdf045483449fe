package io.cobble.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Pinned point-read blocks and the arrays the cache recycles: an array comes back for a new block
 * only once it was evicted unpinned and never handed out by {@link BlockCache#get}.
 */
class BlockCachePinTest {
  // 16 shards of 8 KiB: one shard holds one 4 KiB block plus a little.
  private final BlockCache cache = new BlockCache(16 * 8192);

  /** Keys of the same shard as {@code first} (including it), in order. */
  private List<Long> sameShard(long first, int n) {
    List<Long> keys = new ArrayList<>();
    int shard = cache.shardIndex(first);
    for (long off = 0; keys.size() < n; off += 4096) {
      long k = BlockCache.key(first >>> 40, off);
      if (cache.shardIndex(k) == shard) {
        keys.add(k);
      }
    }
    return keys;
  }

  private byte[] insert(long key, int length, byte fill, BlockCache.Pin pin) {
    byte[] a = cache.allocate(key, length);
    assertTrue(a.length >= length);
    Arrays.fill(a, 0, length, fill);
    cache.insertPinned(key, a, length, pin);
    return a;
  }

  /**
   * A release finds its block again after the block's entry moved while pinned (another entry of
   * its shard was removed): it is unpinned, so once evicted its array is recycled.
   */
  @Test
  void releaseUnpinsABlockWhoseEntryMovedWhilePinned() {
    long other = BlockCache.key(5, 0);
    long moved = -1;
    for (long off = 0; moved < 0; off += 4096) {
      long k = BlockCache.key(6, off);
      if (cache.shardIndex(k) == cache.shardIndex(other)) {
        moved = k;
      }
    }
    BlockCache.Pin pin = new BlockCache.Pin();
    insert(other, 1000, (byte) 1, pin);
    cache.release(pin);
    BlockCache.Pin held = new BlockCache.Pin();
    byte[] block = insert(moved, 1000, (byte) 2, held);
    cache.evictFile(5); // the last entry, the pinned block, moves into the removed one's place
    cache.release(held);
    cache.evictFile(6);
    byte[] a = cache.allocate(other, 1000);
    byte[] b = cache.allocate(other, 1000);
    assertTrue(a == block || b == block, "the released block's array was recycled");
  }

  @Test
  void evictedUnpinnedArrayIsReusedForTheNextBlock() {
    List<Long> keys = sameShard(BlockCache.key(1, 0), 4);
    BlockCache.Pin pin = new BlockCache.Pin();
    byte[] first = insert(keys.get(0), 4000, (byte) 1, pin);
    assertSame(first, pin.data());
    assertEquals(4000, pin.length());
    cache.release(pin);
    insert(keys.get(1), 4000, (byte) 2, pin);
    cache.release(pin);
    insert(keys.get(2), 4000, (byte) 3, pin); // evicts keys[0]
    cache.release(pin);
    assertFalse(cache.acquire(keys.get(0), pin));
    assertSame(first, cache.allocate(keys.get(3), 3900));
  }

  @Test
  void pinnedArrayIsNeverHandedOutAgain() {
    List<Long> keys = sameShard(BlockCache.key(2, 0), 40);
    BlockCache.Pin held = new BlockCache.Pin();
    byte[] first = insert(keys.get(0), 4000, (byte) 7, held);
    BlockCache.Pin other = new BlockCache.Pin();
    for (int i = 1; i < keys.size(); i++) {
      byte[] a = insert(keys.get(i), 4000, (byte) i, other);
      assertNotSame(first, a, "a pinned block's array was reused at " + i);
      cache.release(other);
    }
    for (int i = 0; i < 4000; i++) {
      assertEquals(7, first[i]);
    }
    cache.release(held);
    for (int i = 0; i < 10; i++) {
      assertNotSame(first, cache.allocate(keys.get(1), 4000), "evicted while pinned: dropped");
    }
  }

  @Test
  void getHandsOutAnExactCopyThatIsNeverRecycled() {
    List<Long> keys = sameShard(BlockCache.key(3, 0), 40);
    BlockCache.Pin pin = new BlockCache.Pin();
    byte[] pooled = insert(keys.get(0), 4000, (byte) 5, pin);
    cache.release(pin);
    byte[] exact = cache.get(keys.get(0));
    assertEquals(4000, exact.length);
    assertArrayEquals(Arrays.copyOf(pooled, 4000), exact);
    assertTrue(cache.acquire(keys.get(0), pin));
    assertSame(exact, pin.data());
    cache.release(pin);
    for (int i = 1; i < keys.size(); i++) {
      byte[] a = insert(keys.get(i), 4000, (byte) 9, pin);
      assertNotSame(exact, a);
      cache.release(pin);
    }
    for (byte b : exact) {
      assertEquals(5, b);
    }
  }

  @Test
  void secondInsertOfAKeyPinsTheCachedCopy() {
    long key = BlockCache.key(4, 0);
    BlockCache.Pin a = new BlockCache.Pin();
    BlockCache.Pin b = new BlockCache.Pin();
    byte[] first = insert(key, 1000, (byte) 1, a);
    insert(key, 1000, (byte) 2, b);
    assertSame(first, b.data());
    cache.release(a);
    cache.release(b);
    assertEquals(1024, cache.usage());
  }
}
