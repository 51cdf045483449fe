package io.cobble.sst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.cache.BlockCache;
import io.cobble.iterator.KvIterator;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A table cursor positions and walks as a sorted map of the written entries does, whether it seeks
 * through the decoded index (pinned, decoded partitions) or through the index blocks: random keys
 * of shared prefixes (some a prefix of another) in tables of tiny blocks and many index partitions,
 * random seeks (written keys, keys between them, before and after all of them) each followed by a
 * random walk that often crosses block and partition ends, one cursor reused for every seek and
 * reopened over the next table. The random test prints its seed; replay one with {@code
 * -Dcobble.table-cursor.seed=<seed>}.
 */
class TableCursorModelTest {
  @TempDir Path dir;

  // Shared bytes the cursors reported over a test's walks: a cursor that reports none would pass.
  private long sharedReported;

  private static byte[] randomKey(Random random) {
    byte[] k = new byte[1 + random.nextInt(12)];
    for (int i = 0; i < k.length; i++) {
      // Few distinct bytes, so keys share prefixes and some keys are prefixes of others.
      k[i] = (byte) ('a' + random.nextInt(i < 3 ? 3 : 20));
    }
    return k;
  }

  private static TreeMap<byte[], byte[]> randomEntries(Random random, int count) {
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    while (model.size() < count) {
      byte[] v = new byte[random.nextInt(40)];
      random.nextBytes(v);
      model.put(randomKey(random), v);
    }
    return model;
  }

  private Table write(String name, TreeMap<byte[], byte[]> entries, int blockSize, boolean pinned) {
    return write(name, entries, blockSize, pinned, false);
  }

  private Table write(
      String name, TreeMap<byte[], byte[]> entries, int blockSize, boolean pinned, boolean lazy) {
    Path path = dir.resolve(name);
    TableBuilder b =
        new TableBuilder(
            path,
            TableOptions.builder()
                .blockSize(blockSize)
                .restartInterval(1 + blockSize % 7)
                .partitionedIndex(true)
                .build());
    for (Map.Entry<byte[], byte[]> e : entries.entrySet()) {
      b.add(e.getKey(), e.getValue());
    }
    b.finish(1, 0, Long.MAX_VALUE, Collections.emptyMap());
    return Table.open(
        path,
        name.hashCode(),
        new BlockCache(1 << 16),
        TableReadOptions.builder()
            .pinTopIndex(pinned)
            .pinPartitions(pinned)
            .lazyMetadata(lazy)
            .build());
  }

  @ParameterizedTest(name = "pinned and decoded {0}")
  @CsvSource({"true", "false"})
  void seeksAndWalksAgreeWithASortedMap(boolean pinned) {
    long seed = Long.getLong("cobble.table-cursor.seed", System.nanoTime());
    System.out.println("TableCursorModelTest pinned=" + pinned + " seed=" + seed);
    Random random = new Random(seed);
    KvIterator cursor = null;
    for (int table = 0; table < 12; table++) {
      TreeMap<byte[], byte[]> model = randomEntries(random, 1 + random.nextInt(600));
      int blockSize = 48 + random.nextInt(300);
      try (Table t = write(table + ".sst", model, blockSize, pinned)) {
        if (pinned) {
          assertNotNull(t.decodedIndex(), "the cursor must take the decoded path");
        } else {
          assertNull(t.decodedIndex());
        }
        cursor = t.iterator(0, cursor);
        String where = "seed=" + seed + " table=" + table + " blockSize=" + blockSize;
        cursor.seekToFirst();
        walk(cursor, model.entrySet().iterator(), model.size() + 1, where + " from the first");
        for (int s = 0; s < 300; s++) {
          byte[] target = randomKey(random);
          cursor.seek(target);
          walk(
              cursor,
              model.tailMap(target, true).entrySet().iterator(),
              random.nextInt(4) == 0 ? 200 : random.nextInt(8),
              where + " seek=" + new String(target, java.nio.charset.StandardCharsets.UTF_8));
        }
        cursor.close();
      }
    }
    assertTrue(sharedReported > 0, "no cursor reported shared bytes");
  }

  /** Lazy metadata stays a point read's to load: a scan walks the index blocks until then. */
  @Test
  void scansDoNotLoadLazyMetadata() {
    TreeMap<byte[], byte[]> model = randomEntries(new Random(7), 300);
    try (Table t = write("lazy.sst", model, 64, true, true)) {
      KvIterator cursor = t.iterator(0);
      byte[] middle = model.keySet().toArray(new byte[0][])[150];
      cursor.seek(middle);
      walk(cursor, model.tailMap(middle, true).entrySet().iterator(), 200, "before the get");
      assertNull(t.decodedIndex(), "a scan loaded lazy metadata");
      t.get(middle, BloomFilter.hash(middle));
      assertNotNull(t.decodedIndex());
      cursor.seek(middle);
      walk(cursor, model.tailMap(middle, true).entrySet().iterator(), 200, "after the get");
      cursor.close();
    }
  }

  /**
   * Checks up to {@code steps} positions of {@code cursor} against {@code expected}, and that the
   * bytes it reports a key sharing with the one before it are shared (none after a seek).
   */
  private void walk(
      KvIterator cursor, Iterator<Map.Entry<byte[], byte[]>> expected, int steps, String where) {
    byte[] previous = null;
    for (int i = 0; i < steps; i++) {
      if (!expected.hasNext()) {
        assertEquals(false, cursor.valid(), where + " step " + i + ": past the last entry");
        return;
      }
      Map.Entry<byte[], byte[]> e = expected.next();
      assertEquals(true, cursor.valid(), where + " step " + i + ": exhausted early");
      assertArrayEquals(e.getKey(), cursor.key(), where + " step " + i);
      assertArrayEquals(e.getValue(), cursor.value(), where + " step " + i);
      int shared = cursor.sharedWithPrevious();
      if (previous == null) {
        assertEquals(0, shared, where + " step " + i + ": shared bytes after a seek");
      } else {
        int m = Arrays.mismatch(previous, e.getKey());
        assertTrue(
            shared <= (m < 0 ? previous.length : m),
            where + " step " + i + ": reports " + shared + " shared bytes, the keys share " + m);
        sharedReported += shared;
      }
      previous = e.getKey();
      cursor.next();
    }
  }
}
