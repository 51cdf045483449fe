package io.cobble.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}
