package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.cache.BlockCache;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gets judged as bottom-level gets ({@link Table.GetScratch#bottomLevel}) skip the bloom probe
 * while it rules nothing out, probe again once it does, and answer the same either way. Without
 * pinned metadata every block a get reads (top index, filter partition, index partition, data
 * block) is a block-cache lookup, so the lookups per get show whether the filter was read.
 */
class BottomLevelFilterTest {
  private static final int KEYS = 4000;

  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("k/%08d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(int i) {
    return ("v" + i).getBytes(StandardCharsets.UTF_8);
  }

  /** Even keys are held, odd ones are not. */
  private Table table(BlockCache cache) {
    Path path = dir.resolve("000001.sst");
    TableBuilder b =
        new TableBuilder(
            path,
            TableOptions.builder()
                .blockSize(512)
                .bloomBitsPerKey(10)
                .partitionedIndex(true)
                .build());
    for (int i = 0; i < KEYS; i += 2) {
      b.add(key(i), value(i));
    }
    b.finish(1, Long.MAX_VALUE, Long.MAX_VALUE, Collections.emptyMap());
    return Table.open(path, 1, cache, TableReadOptions.builder().build());
  }

  /** Runs {@code gets} gets of keys {@code first, first + 2, ...} and returns the cache lookups. */
  private static long lookups(Table t, BlockCache cache, Table.GetScratch g, int first, int gets) {
    long before = cache.hits() + cache.misses();
    for (int n = 0; n < gets; n++) {
      int i = (first + 2 * n) % KEYS;
      byte[][] out = new byte[1][];
      boolean found =
          t.get(
              key(i),
              BloomFilter.hash(key(i)),
              (b, o, l) -> out[0] = Arrays.copyOfRange(b, o, o + l),
              g);
      if (i % 2 == 0) {
        assertTrue(found, "held key " + i);
        assertArrayEquals(value(i), out[0], "value of " + i);
      } else {
        assertFalse(found, "absent key " + i);
      }
    }
    return cache.hits() + cache.misses() - before;
  }

  @Test
  void bottomLevelGetsSkipAFilterThatRulesNothingOutAndProbeAgainWhenItDoes() {
    BlockCache cache = new BlockCache(16 << 20);
    try (Table t = table(cache)) {
      Table.GetScratch plain = new Table.GetScratch();
      int gets = 20 * FilterUse.SAMPLE;
      // Four lookups per held key's get: top index, filter, index partition, data block.
      long probing = lookups(t, cache, plain, 0, gets);
      Table.GetScratch bottom = new Table.GetScratch();
      bottom.bottomLevel(true);
      lookups(t, cache, bottom, 0, FilterUse.WINDOW);
      long sampling = lookups(t, cache, bottom, 0, gets);
      assertTrue(
          sampling <= probing - gets + 2 * gets / FilterUse.SAMPLE,
          "lookups of held keys: " + sampling + " while sampling, " + probing + " probing");
      // Absent keys: unprobed, each reads the top index, index partition and data block, until a
      // sampled probe rules one out; from then on each reads only the top index and the filter.
      lookups(t, cache, bottom, 1, FilterUse.SAMPLE);
      long absent = lookups(t, cache, bottom, 1, gets);
      assertTrue(absent <= 2 * gets + gets / 10, "lookups of absent keys: " + absent);
      // Gets not judged as bottom-level ones always probe: their counts are as before.
      assertEquals(probing, lookups(t, cache, plain, 0, gets), "plain gets changed");
    }
  }
}
