package io.cobble.read;

import static io.cobble.read.AllocationProbe.allocatedBy;
import static io.cobble.read.AllocationRows.key;
import static io.cobble.read.AllocationRows.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.SingleDb;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A seek with a short scan copies no block: the cursor reads the cached data block it stands on in
 * place (pinned, and decoded into an array the cache recycles when the seek misses the cache), the
 * merge reads keys and rows from the sources' buffers, and a closed scan hands its table, level and
 * merge cursors to the thread's next scan. Measured with the JVM's per-thread allocation counter
 * (second of two identical runs): opening a positioned cursor allocates a few hundred bytes of
 * set-up (the cursor the caller holds, the seek key, each memtable's snapshot cursor), and each row
 * allocates exactly what the caller gets. A block copied per seek (4 KiB here), a pin left behind
 * (the cache could no longer recycle the arrays of evicted blocks, so each miss would allocate
 * one), or a key copied per row and source shows up as hundreds to thousands of bytes more.
 */
class ScanAllocationTest {
  private static final int KEYS = 40_000;
  private static final int SEEKS = 5_000;
  private static final int ROWS = 10;
  private static final int BLOCK = 4096;

  /**
   * What the caller gets per row, with compressed references: the entry (24 B), the row (24 B), its
   * one-column array (24 B), the 11-byte key (32 B) and the 100-byte value (120 B).
   */
  private static final int CALLER_ROW = 224;

  /** The cursor object a prefix scan hands its caller, with compressed references. */
  private static final int CURSOR = 96;

  @TempDir Path dir;

  @Test
  void seeksAllocateTheirRowsAndASmallCursor() {
    // A 256 KB cache over ~5 MB of blocks: most seeks read and decode their data block.
    Config config =
        Config.builder()
            .set("block-cache.size", 256 << 10)
            .set("sst.block-size", BLOCK)
            .set("sst.compression", "none,lz4")
            .build();
    try (SingleDb db = SingleDb.open(dir, config)) {
      fillAndCompact(db);
      byte[][] starts = new byte[SEEKS][];
      Random r = new Random(7);
      for (int i = 0; i < SEEKS; i++) {
        starts[i] = key(r.nextInt(KEYS - ROWS));
      }
      long cacheMisses = db.metrics().cacheMisses();

      long openBytes =
          allocatedBy(
              () -> {
                for (int i = 0; i < SEEKS; i++) {
                  db.scan(starts[i], null).close();
                }
              });
      long seekBytes =
          allocatedBy(
              () -> {
                for (int i = 0; i < SEEKS; i++) {
                  try (SingleDb.Cursor cursor = db.scan(starts[i], null)) {
                    for (int j = 0; j < ROWS; j++) {
                      cursor.next();
                    }
                  }
                }
              });
      assertTrue(
          db.metrics().cacheMisses() - cacheMisses > SEEKS, "the seeks must also miss the cache");

      double perOpen = (double) openBytes / SEEKS;
      double perRow = (double) (seekBytes - openBytes) / (SEEKS * ROWS);
      System.out.printf(
          "ScanAllocationTest: opening a cursor %.1f B, each row %.1f B%n", perOpen, perRow);
      assertTrue(
          perOpen < BLOCK / 4,
          "opening a positioned cursor allocated " + perOpen + " B: a block copy per seek?");
      assertTrue(
          perRow <= CALLER_ROW + 8,
          "a row allocated " + perRow + " B, of which the caller gets " + CALLER_ROW + " B");

      for (int i = 0; i < 100; i++) {
        int start = r.nextInt(KEYS - ROWS);
        try (SingleDb.Cursor cursor = db.scan(key(start), null)) {
          for (int j = 0; j < ROWS; j++) {
            Map.Entry<byte[], byte[]> row = cursor.next();
            assertArrayEquals(key(start + j), row.getKey());
            assertArrayEquals(value(start + j), row.getValue());
          }
        }
      }
      try (SingleDb.Cursor cursor = db.scan(key(KEYS - 2), null)) {
        assertArrayEquals(value(KEYS - 2), cursor.next().getValue());
        assertArrayEquals(value(KEYS - 1), cursor.next().getValue());
        assertFalse(cursor.hasNext());
      }
    }
  }

  /**
   * A per-key prefix scan read in place (a state backend's map iteration) allocates its cursor and
   * no bounds or spans: those live in the thread's scan set, reused by each scan. Two new tree keys
   * and a spans array per scan (about 90 bytes) show above the bound.
   */
  @Test
  void prefixScansReadInPlaceAllocateOnlyTheirCursor() {
    Config config = Config.builder().set("sst.block-size", BLOCK).build();
    try (SingleDb single = SingleDb.open(dir, config)) {
      fillAndCompact(single);
      Db db = single.db();
      // "key0001234" and its ten keys "key00012340".."key00012349".
      byte[][] prefixes = new byte[SEEKS][];
      Random r = new Random(8);
      for (int i = 0; i < SEEKS; i++) {
        prefixes[i] = Arrays.copyOf(key(r.nextInt(KEYS / ROWS) * ROWS), 10);
      }
      int[] rows = new int[1];
      long bytes =
          allocatedBy(
              () -> {
                for (byte[] prefix : prefixes) {
                  try (ScanCursor c = db.scanPrefix(0, "default", prefix, ScanOptions.DEFAULT)) {
                    while (c.advance()) {
                      rows[0] += c.valueLength(0);
                    }
                  }
                }
              });
      assertEquals(2L * SEEKS * ROWS * AllocationRows.VALUE, rows[0], "every row read, twice");
      double perScan = (double) bytes / SEEKS;
      System.out.printf("ScanAllocationTest: a prefix scan read in place %.1f B%n", perScan);
      assertTrue(perScan <= CURSOR, "a prefix scan allocated " + perScan + " B");
    }
  }

  /** The {@link #KEYS} rows, flushed and compacted into one level. */
  private static void fillAndCompact(SingleDb db) {
    for (int i = 0; i < KEYS; i++) {
      db.put(key(i), value(i));
    }
    db.flush();
    db.db().compactAll();
    db.db().waitForCompactions();
  }
}
