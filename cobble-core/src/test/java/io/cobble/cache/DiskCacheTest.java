package io.cobble.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The on-disk cache of remote files: budget, LRU order, restart, origin and liveness checks. */
class DiskCacheTest {
  private static final int CHUNK = 4096;

  @TempDir Path dir;

  private static byte[] chunk(int fill) {
    byte[] b = new byte[CHUNK];
    Arrays.fill(b, (byte) fill);
    return b;
  }

  private static boolean cached(DiskCache cache, String path, long index, int fill) {
    byte[] out = new byte[CHUNK];
    if (!cache.readChunk(path, index, 0, out, 0, CHUNK)) {
      return false;
    }
    assertArrayEquals(chunk(fill), out);
    return true;
  }

  @Test
  void evictsLeastRecentlyUsedChunksToStayWithinBudget() {
    DiskCache cache = DiskCache.open(dir, "s3://b/db", 4 * CHUNK, CHUNK);
    for (int i = 0; i < 4; i++) {
      cache.putChunk("data/a.sst", i, chunk(i), 0, CHUNK);
    }
    assertTrue(cached(cache, "data/a.sst", 0, 0), "touch chunk 0: now the most recent");
    cache.putChunk("data/a.sst", 4, chunk(4), 0, CHUNK);
    assertEquals(4 * CHUNK, cache.usedBytes());
    assertFalse(cached(cache, "data/a.sst", 1, 1), "the least recently used chunk went");
    assertTrue(cached(cache, "data/a.sst", 0, 0));
    assertTrue(cached(cache, "data/a.sst", 4, 4));
  }

  @Test
  void keepsEntriesAcrossRestartsOfTheSameOriginOnly() throws Exception {
    DiskCache cache = DiskCache.open(dir, "s3://b/db", 1 << 20, CHUNK);
    cache.putChunk("data/a.sst", 0, chunk(7), 0, CHUNK);
    Path whole = dir.resolve("staged");
    Files.write(whole, chunk(9));
    cache.adopt("data/b.sst", whole);
    assertFalse(Files.exists(whole), "moved into the cache");

    DiskCache again = DiskCache.open(dir, "s3://b/db", 1 << 20, CHUNK);
    assertTrue(cached(again, "data/a.sst", 0, 7));
    assertNotNull(again.wholeFile("data/b.sst"));
    assertEquals(2 * CHUNK, again.usedBytes());

    again.retainOnly(Set.of("data/b.sst"));
    assertFalse(cached(again, "data/a.sst", 0, 7), "not live: dropped");
    assertNotNull(again.wholeFile("data/b.sst"));

    DiskCache other = DiskCache.open(dir, "s3://b/other", 1 << 20, CHUNK);
    assertNull(other.wholeFile("data/b.sst"), "another volume's entries are wiped");
    assertEquals(0, other.usedBytes());
  }

  @Test
  void aFileLargerThanTheBudgetIsNotKept() throws Exception {
    DiskCache cache = DiskCache.open(dir, "s3://b/db", CHUNK, CHUNK);
    Path big = dir.resolve("big");
    Files.write(big, new byte[2 * CHUNK]);
    cache.adopt("data/big.sst", big);
    assertNull(cache.wholeFile("data/big.sst"));
    assertFalse(Files.exists(big));
    assertEquals(0, cache.usedBytes());
  }
}
