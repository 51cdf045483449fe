package io.cobble.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
   * Random puts, gets and file evictions against a reference LRU (an access-ordered map on one
   * shard's share of the budget): same residents, same usage, after every operation.
   */
  @Test
  void matchesReferenceLruUnderRandomOperations() {
    long capacity = 16 * 4096;
    BlockCache cache = new BlockCache(capacity);
    long shardCapacity = capacity / 16;
    Map<Long, LinkedHashMap<Long, byte[]>> model = new HashMap<>();
    Random r = new Random(7);
    for (int i = 0; i < 200_000; i++) {
      long key = BlockCache.key(1 + r.nextInt(5), r.nextInt(40) * 4096L);
      int op = r.nextInt(100);
      if (op < 45) {
        byte[] v = new byte[1 + r.nextInt(1500)];
        cache.put(key, v);
        LinkedHashMap<Long, byte[]> shard = shardOf(model, cache, key);
        shard.remove(key);
        shard.put(key, v);
        long used = shard.values().stream().mapToLong(b -> b.length).sum();
        Iterator<byte[]> it = shard.values().iterator();
        while (used > shardCapacity && it.hasNext()) {
          used -= it.next().length;
          it.remove();
        }
      } else if (op < 99) {
        LinkedHashMap<Long, byte[]> shard = shardOf(model, cache, key);
        byte[] expected = shard.get(key);
        if (expected != null) {
          shard.remove(key);
          shard.put(key, expected);
        }
        assertSame(expected, cache.get(key), "op " + i);
      } else {
        long file = BlockCache.key(1 + r.nextInt(5), 0) >>> 40;
        cache.evictFile(file);
        for (LinkedHashMap<Long, byte[]> shard : model.values()) {
          shard.keySet().removeIf(k -> (k >>> 40) == file);
        }
      }
      long usage = 0;
      for (LinkedHashMap<Long, byte[]> shard : model.values()) {
        usage += shard.values().stream().mapToLong(b -> b.length).sum();
      }
      assertEquals(usage, cache.usage(), "usage after op " + i);
    }
  }

  /** The model shard of a key: keys share a shard exactly when the cache put them together. */
  private static LinkedHashMap<Long, byte[]> shardOf(
      Map<Long, LinkedHashMap<Long, byte[]>> model, BlockCache cache, long key) {
    return model.computeIfAbsent(
        (long) cache.shardIndex(key), k -> new LinkedHashMap<>(16, 0.75f, false));
  }
}
