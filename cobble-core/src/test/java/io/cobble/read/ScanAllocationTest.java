package io.cobble.read;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.SingleDb;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A seek with a short scan copies no block: the cursor reads the cached data block it stands on in
 * place (pinned, and decoded into an array the cache recycles when the seek misses the cache) and
 * the merge reads keys and rows from the sources' buffers. What a seek allocates is the rows it
 * returns plus the cursor's fixed set of objects, well under one block; a block copied per seek (4
 * KiB here), or a pin left behind (the cache could no longer recycle the arrays of evicted blocks,
 * so each miss would allocate a new one), adds a block's size per seek.
 */
class ScanAllocationTest {
  private static final int KEYS = 40_000;
  private static final int VALUE = 100;
  private static final int SEEKS = 5_000;
  private static final int ROWS = 10;
  private static final int BLOCK = 4096;

  @TempDir Path dir;

  private static byte[] key(int i) {
    return String.format("key%08d", i).getBytes();
  }

  private static byte[] value(int i) {
    byte[] v = new byte[VALUE];
    new Random(i).nextBytes(v);
    return v;
  }

  private static long allocated() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getThreadAllocatedBytes(Thread.currentThread().getId());
  }

  /** Bytes this thread allocated in the second of two runs of {@code work}, less the probe's. */
  private static long allocatedBy(Runnable work) {
    work.run();
    long probe = -allocated() + allocated();
    long before = allocated();
    work.run();
    return allocated() - before - probe;
  }

  /**
   * Bytes this thread allocated per returned row for the caller's part alone (key, value, entry).
   */
  private static long callerBytesPerRow(SingleDb db, byte[] start) {
    long before = allocated();
    long total;
    try (SingleDb.Cursor cursor = db.scan(start, null)) {
      before = allocated();
      for (int i = 0; i < ROWS; i++) {
        cursor.next();
      }
      total = allocated() - before;
    }
    return total / ROWS;
  }

  @Test
  void seeksCopyNoBlocks() {
    // A 256 KB cache over ~5 MB of blocks: most seeks read and decode their data block.
    Config config =
        Config.builder()
            .set("block-cache.size", 256 << 10)
            .set("sst.block-size", BLOCK)
            .set("sst.compression", "none,lz4")
            .build();
    try (SingleDb db = SingleDb.open(dir, config)) {
      for (int i = 0; i < KEYS; i++) {
        db.put(key(i), value(i));
      }
      db.flush();
      db.db().compactAll();
      db.db().waitForCompactions();
      int[] starts = new int[SEEKS];
      Random r = new Random(7);
      for (int i = 0; i < SEEKS; i++) {
        starts[i] = r.nextInt(KEYS - ROWS);
      }
      long cacheMisses = db.metrics().cacheMisses();

      long seekBytes =
          allocatedBy(
              () -> {
                for (int i = 0; i < SEEKS; i++) {
                  try (SingleDb.Cursor cursor = db.scan(key(starts[i]), null)) {
                    for (int j = 0; j < ROWS; j++) {
                      Map.Entry<byte[], byte[]> row = cursor.next();
                      if (j == 0) {
                        assertArrayEquals(key(starts[i]), row.getKey());
                      }
                    }
                  }
                }
              });
      // The start keys themselves are the test's, not the seek's.
      long keyBytes = allocatedBy(() -> key(1));

      assertTrue(
          db.metrics().cacheMisses() - cacheMisses > SEEKS, "the seeks must also miss the cache");
      long perSeek = seekBytes / SEEKS - keyBytes;
      long rows = ROWS * callerBytesPerRow(db, key(100));
      System.out.println(
          "ScanAllocationTest: "
              + perSeek
              + " B per seek of "
              + ROWS
              + " rows, "
              + rows
              + " B of them the rows returned");
      assertTrue(
          perSeek - rows < BLOCK / 2,
          "a seek allocated "
              + perSeek
              + " B, "
              + (perSeek - rows)
              + " B beyond its "
              + rows
              + " B of rows: a block copy or a leaked pin per seek?");
      try (SingleDb.Cursor cursor = db.scan(key(KEYS - 2), null)) {
        assertArrayEquals(value(KEYS - 2), cursor.next().getValue());
        assertArrayEquals(value(KEYS - 1), cursor.next().getValue());
        assertEquals(false, cursor.hasNext());
      }
    }
  }
}
