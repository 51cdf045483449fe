package io.cobble.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BlockCacheTest {
  @Test
  void evictsLeastRecentlyUsedByBytesAndCountsHits() {
    BlockCache cache = new BlockCache(16 * 4096);
    long k0 = BlockCache.key(1, 0);
    byte[] b0 = new byte[1000];
    cache.put(k0, b0);
    assertSame(b0, cache.get(k0));
    assertNull(cache.get(BlockCache.key(1, 4096)));
    assertEquals(1, cache.hits());
    assertEquals(1, cache.misses());
    Random r = new Random(1);
    for (int i = 0; i < 10_000; i++) {
      cache.put(BlockCache.key(2 + r.nextInt(50), r.nextInt(1000) * 4096L), new byte[500]);
      if (i % 10 == 0) {
        assertNotNull(cache.get(k0), "hot entry evicted at " + i);
      }
      assertTrue(cache.usage() <= 16 * 4096, "usage " + cache.usage());
    }
    cache.evictFile(1);
    assertNull(cache.get(k0));
  }

  @Test
  void reservationsShrinkTheLruAndStopAtSevenEighths() {
    int capacity = 16 * 64 * 1024;
    BlockCache cache = new BlockCache(capacity);
    // Four times what fits, so that every shard is full.
    for (int i = 0; i < 4096; i++) {
      cache.put(BlockCache.key(1, i * 1024L), new byte[1024]);
    }
    assertEquals(capacity, cache.usage());
    assertTrue(cache.reserve(capacity / 2));
    assertEquals(capacity / 2, cache.reserved());
    // The LRU gave up half of its blocks: what it holds plus the reservation stays in capacity.
    assertEquals(capacity, cache.usage());
    int held = 0;
    for (int i = 0; i < 4096; i++) {
      if (cache.get(BlockCache.key(1, i * 1024L)) != null) {
        held++;
      }
    }
    assertEquals(512, held);
    assertFalse(cache.reserve(capacity / 2), "the LRU keeps an eighth");
    assertTrue(cache.reserve(capacity / 2 - capacity / 8));
    assertFalse(cache.reserve(1));
    cache.unreserve(capacity / 2 - capacity / 8);
    cache.unreserve(capacity / 2);
    assertEquals(0, cache.reserved());
    for (int i = 0; i < 4096; i++) {
      cache.put(BlockCache.key(2, i * 1024L), new byte[1024]);
    }
    assertEquals(capacity, cache.usage(), "the whole capacity is the LRU's again");
  }

  @Test
  void survivesHeavyChurnWithConsistentLookups() {
    BlockCache cache = new BlockCache(1 << 20);
    for (int i = 0; i < 50_000; i++) {
      long k = BlockCache.key(i % 7, i * 64L);
      byte[] v = new byte[] {(byte) i};
      cache.put(k, v);
      assertSame(v, cache.get(k));
    }
    long usage = cache.usage();
    assertTrue(usage > 0 && usage <= 1 << 20);
    for (int f = 0; f < 7; f++) {
      cache.evictFile(f);
    }
    assertEquals(0, cache.usage());
  }

  /**
   * Random puts, gets and file evictions against a model of the policy: same residents, same usage,
   * after every operation. Exact LRU no longer applies: a hit on an entry moved to the front fewer
   * than a quarter of the shard's entries ago leaves the order alone, so the model keeps, per
   * shard, the recency order (an insertion-ordered map, least recent first), a move counter and
   * each entry's count at its last move. Puts always move; a hit moves when the entry is outside
   * the front quarter. A cache that never moved on hits, or always did (exact LRU), diverges from
   * it: half the operations use a block put lately, which a hit finds in the front quarter, and the
   * other half a block of a key space larger than the cache.
   */
  @Test
  void matchesThePolicyModelUnderRandomOperations() {
    long capacity = 16 * 4096;
    BlockCache cache = new BlockCache(capacity);
    long shardCapacity = capacity / 16;
    Map<Long, ModelShard> model = new HashMap<>();
    Random r = new Random(7);
    long[] recent = new long[16];
    for (int i = 0; i < 200_000; i++) {
      boolean small = r.nextInt(4) != 0;
      // Half the gets ask for a block put lately (the front quarter, where a hit does not move),
      // the rest for any block, so blocks hit without a move are later found evicted or not.
      long key =
          r.nextBoolean()
              ? recent[r.nextInt(recent.length)]
              : BlockCache.key(1 + r.nextInt(5), r.nextInt(small ? 40 : 400) * 4096L);
      int op = r.nextInt(100);
      ModelShard shard = model.computeIfAbsent((long) cache.shardIndex(key), k -> new ModelShard());
      if (op < 45) {
        byte[] v = new byte[1 + r.nextInt(small ? 300 : 1500)];
        cache.put(key, v);
        recent[i % recent.length] = key;
        shard.moveToFront(key, v);
        long used = shard.usage();
        Iterator<byte[]> it = shard.order.values().iterator();
        while (used > shardCapacity && it.hasNext()) {
          used -= it.next().length;
          it.remove();
        }
      } else if (op < 99) {
        byte[] expected = shard.order.get(key);
        if (expected != null && shard.ticks - shard.tick.get(key) >= (shard.order.size() >> 2)) {
          shard.moveToFront(key, expected);
        }
        assertSame(expected, cache.get(key), "op " + i);
      } else {
        long file = BlockCache.key(1 + r.nextInt(5), 0) >>> 40;
        cache.evictFile(file);
        for (ModelShard s : model.values()) {
          s.order.keySet().removeIf(k -> (k >>> 40) == file);
        }
      }
      long usage = 0;
      for (ModelShard s : model.values()) {
        usage += s.usage();
      }
      assertEquals(usage, cache.usage(), "usage after op " + i);
    }
  }

  /** A hit outside the front quarter moves the entry: it outlives entries put after it. */
  @Test
  void aHitOutsideTheFrontQuarterProtectsTheEntry() {
    BlockCache cache = new BlockCache(16 * 8 * 100);
    long[] keys = sameShardKeys(cache, 9);
    for (int i = 0; i < 8; i++) {
      cache.put(keys[i], new byte[100]);
    }
    // keys[0] is the least recent of 8: a hit must move it, so the next put evicts keys[1].
    assertNotNull(cache.get(keys[0]));
    cache.put(keys[8], new byte[100]);
    assertNotNull(cache.get(keys[0]), "a hit on the least recent entry did not protect it");
    assertNull(cache.get(keys[1]));
  }

  private static long[] sameShardKeys(BlockCache cache, int n) {
    long[] keys = new long[n];
    int shard = cache.shardIndex(BlockCache.key(1, 0));
    int found = 0;
    for (long off = 0; found < n; off += 4096) {
      long k = BlockCache.key(1, off);
      if (cache.shardIndex(k) == shard) {
        keys[found++] = k;
      }
    }
    return keys;
  }

  /** One shard of the policy model. */
  private static final class ModelShard {
    final LinkedHashMap<Long, byte[]> order = new LinkedHashMap<>(16, 0.75f, false);
    final Map<Long, Long> tick = new HashMap<>();
    long ticks;

    void moveToFront(long key, byte[] v) {
      order.remove(key);
      order.put(key, v);
      tick.put(key, ++ticks);
    }

    long usage() {
      return order.values().stream().mapToLong(b -> b.length).sum();
    }
  }
}
