package io.cobble.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
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
   * Random puts, gets and file evictions against a model of second chance: same residents, same
   * usage, after every operation. The model keeps, per shard, the order (an insertion-ordered map,
   * the entry eviction reaches first at its head) and the entries hit since they last came to the
   * front. A put drops the key's entry, evicts until the new block fits and puts it at the front
   * unmarked; a hit only marks its entry; eviction takes the head, moving a marked head to the
   * front unmarked instead. A cache that ignored hits (FIFO) or moved on every hit (exact LRU)
   * diverges from it: half the operations use a block put lately, the other half a block of a key
   * space larger than the cache.
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
        shard.put(key, v, shardCapacity);
      } else if (op < 99) {
        byte[] expected = shard.order.get(key);
        if (expected != null) {
          shard.referenced.add(key);
        }
        assertSame(expected, cache.get(key), "op " + i);
      } else {
        long file = BlockCache.key(1 + r.nextInt(5), 0) >>> 40;
        cache.evictFile(file);
        for (ModelShard s : model.values()) {
          s.order.keySet().removeIf(k -> (k >>> 40) == file);
          s.referenced.removeIf(k -> (k >>> 40) == file);
        }
      }
      long usage = 0;
      for (ModelShard s : model.values()) {
        usage += s.usage();
      }
      assertEquals(usage, cache.usage(), "usage after op " + i);
    }
  }

  /** A hit on the entry eviction reaches next gives it a second chance: it outlives later puts. */
  @Test
  void aHitProtectsTheEntryFromTheNextEviction() {
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
    final Set<Long> referenced = new HashSet<>();

    void moveToFront(long key, byte[] v) {
      order.remove(key);
      order.put(key, v);
      referenced.remove(key);
    }

    void put(long key, byte[] v, long capacity) {
      order.remove(key);
      referenced.remove(key);
      evictOver(capacity - v.length);
      order.put(key, v);
    }

    void evictOver(long capacity) {
      long used = usage();
      while (used > capacity && !order.isEmpty()) {
        Map.Entry<Long, byte[]> head = order.entrySet().iterator().next();
        if (referenced.contains(head.getKey())) {
          moveToFront(head.getKey(), head.getValue());
        } else {
          used -= head.getValue().length;
          order.remove(head.getKey());
        }
      }
    }

    long usage() {
      return order.values().stream().mapToLong(b -> b.length).sum();
    }
  }
}
