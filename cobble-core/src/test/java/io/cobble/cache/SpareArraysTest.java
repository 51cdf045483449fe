package io.cobble.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The spare arrays of a full cache shard: each miss takes one and its insert evicts one back, so
 * after the first miss of a new block size the misses allocate nothing, even when the allowance was
 * filled with arrays of a size nobody asks for any more.
 */
class SpareArraysTest {
  private static final long MAX = 64 << 10;

  @Test
  void arraysOfAnOldSizeMakeWayForTheSizeNowAskedFor() {
    SpareArrays spares = new SpareArrays();
    // The blocks of replaced tables: 1 KiB arrays up to the whole allowance.
    for (int i = 0; i < MAX / 1024; i++) {
      spares.give(new byte[1024], 1024, MAX);
    }
    // Blocks of about 4 KB now: a miss takes an array, then its insert evicts the previous block.
    byte[] cached = spares.take(4000, MAX);
    assertEquals(4096, cached.length);
    byte[] evicted = null;
    for (int miss = 0; miss < 100; miss++) {
      byte[] array = spares.take(4000, MAX);
      if (evicted != null) {
        assertTrue(array == evicted, "miss " + miss + " must reuse the array evicted before it");
      }
      evicted = cached;
      spares.give(evicted, evicted.length, MAX);
      cached = array;
    }
  }

  @Test
  void arraysOfTheAskedSizeAreKeptWhileTheyFit() {
    SpareArrays spares = new SpareArrays();
    byte[] kept = new byte[4096];
    spares.give(kept, 4096, MAX);
    for (int i = 0; i < 8; i++) {
      spares.give(new byte[1024], 1024, MAX);
    }
    assertTrue(kept == spares.take(3900, MAX));
    // A size with no kept array: a new one, and the small arrays stay (the allowance has room).
    byte[] fresh = spares.take(8000, MAX);
    assertEquals(8192, fresh.length);
    byte[] small = spares.take(1000, MAX);
    assertEquals(1024, small.length);
    assertTrue(fresh != small);
  }
}
