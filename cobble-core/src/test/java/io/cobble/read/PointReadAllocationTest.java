package io.cobble.read;

import static io.cobble.read.AllocationProbe.allocatedBy;
import static io.cobble.read.AllocationRows.VALUE;
import static io.cobble.read.AllocationRows.key;
import static io.cobble.read.AllocationRows.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.SingleDb;
import io.cobble.schema.ColumnSpec;
import io.cobble.util.ColumnsSink;
import io.cobble.util.ValueSink;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A point read allocates only the value it returns: a miss allocates nothing (including the ~1 % a
 * bloom filter lets through to a data block), and a hit, including one that misses the block cache
 * and decodes its block from the file, allocates the returned value and a few dozen bytes. Measured
 * with the JVM's per-thread allocation counter over many reads, after the same loop ran once (class
 * loading, lazy buffers and compilation allocate once), so a single stray object per read shows as
 * at least 16 bytes per read (what remains is the counter's own noise).
 */
class PointReadAllocationTest {
  private static final int KEYS = 40_000;
  private static final int READS = 20_000;

  @TempDir Path dir;

  @Test
  void pointReadsAllocateOnlyTheirValues() {
    // A 256 KB cache over ~5 MB of blocks: most hits read and decode their data block.
    Config config =
        Config.builder()
            .set("block-cache.size", 256 << 10)
            .set("sst.block-size", 4096)
            .set("sst.compression", "none,lz4")
            .build();
    try (SingleDb db = SingleDb.open(dir, config)) {
      for (int i = 0; i < KEYS; i++) {
        db.put(key(2 * i), value(i));
      }
      db.flush();
      db.db().compactAll();
      db.db().waitForCompactions();
      byte[][] hitKeys = new byte[READS][];
      byte[][] missKeys = new byte[READS][];
      Random r = new Random(7);
      for (int i = 0; i < READS; i++) {
        hitKeys[i] = key(2 * r.nextInt(KEYS));
        missKeys[i] = key(2 * r.nextInt(KEYS) + 1);
      }
      long cacheMisses = db.metrics().cacheMisses();

      long missBytes =
          allocatedBy(
              () -> {
                for (int i = 0; i < READS; i++) {
                  assertNull(db.get(missKeys[i]));
                }
              });
      long hitBytes =
          allocatedBy(
              () -> {
                for (int i = 0; i < READS; i++) {
                  assertNotNull(db.get(hitKeys[i]));
                }
              });

      assertTrue(
          db.metrics().cacheMisses() - cacheMisses > READS, "the hits must also miss the cache");
      // Under a byte per read: one object per read would be at least 16 bytes per read.
      assertTrue(missBytes < READS, "misses allocated " + missBytes + " B in all");
      // The returned value (16-byte header + 100 bytes) plus the row's byte[][]: ~144 bytes.
      assertTrue(
          hitBytes / READS <= VALUE + 60,
          "a hit allocated " + (double) hitBytes / READS + " B for a " + VALUE + "-byte value");
      assertArrayEquals(value(5), db.get(key(10)));
    }
  }

  @Test
  void readColumnHandsValuesOverWithoutAllocating() {
    Config config =
        Config.builder()
            .set("block-cache.size", 256 << 10)
            .set("sst.block-size", 4096)
            .set("sst.compression", "none,lz4")
            .build();
    try (SingleDb db = SingleDb.open(dir, config)) {
      // Even keys in tables (most reads miss the cache and decode a block), odd ones in a memtable.
      for (int i = 0; i < KEYS; i++) {
        db.put(key(2 * i), value(i));
      }
      db.flush();
      db.db().compactAll();
      db.db().waitForCompactions();
      for (int i = 0; i < KEYS; i++) {
        db.put(key(2 * i + 1), value(i));
      }
      byte[][] keys = new byte[READS][];
      Random r = new Random(7);
      for (int i = 0; i < READS; i++) {
        keys[i] = key(r.nextInt(2 * KEYS));
      }
      long[] sum = new long[1];
      ValueSink sink = (buf, off, len) -> sum[0] += buf[off + len - 1] + len;
      long bytes =
          allocatedBy(
              () -> {
                for (int i = 0; i < READS; i++) {
                  assertTrue(db.db().readColumn(0, "default", keys[i], 0, sink));
                }
              });
      // Under a byte per read, where getColumn allocates the 116-byte value each time.
      assertTrue(bytes < READS, "readColumn allocated " + (double) bytes / READS + " B per read");
      assertTrue(sum[0] > 0);
    }
  }

  @Test
  void readColumnsHandsWholeRowsOverWithoutAllocating() {
    Config config =
        Config.builder()
            .set("block-cache.size", 256 << 10)
            .set("sst.block-size", 4096)
            .set("sst.compression", "none,lz4")
            .build();
    try (SingleDb db = SingleDb.open(dir, config)) {
      db.db()
          .createFamily(
              "rows",
              java.util.List.of(ColumnSpec.of("a"), ColumnSpec.of("b"), ColumnSpec.of("c")));
      byte[] values = new byte[3 * VALUE];
      int[] ends = {VALUE, 2 * VALUE, 3 * VALUE};
      // Even keys in tables (most reads miss the cache and decode a block), odd ones in a memtable.
      for (int i = 0; i < KEYS; i++) {
        byte[] k = key(2 * i);
        db.db().putRow(0, "rows", k, k.length, values, ends);
      }
      db.flush();
      db.db().compactAll();
      db.db().waitForCompactions();
      for (int i = 0; i < KEYS; i++) {
        byte[] k = key(2 * i + 1);
        db.db().putRow(0, "rows", k, k.length, values, ends);
      }
      byte[][] keys = new byte[READS][];
      Random r = new Random(7);
      for (int i = 0; i < READS; i++) {
        keys[i] = key(r.nextInt(2 * KEYS));
      }
      int[] projection = {2, 0};
      long[] sum = new long[1];
      ColumnsSink sink = (index, buf, off, len) -> sum[0] += index + len;
      long bytes =
          allocatedBy(
              () -> {
                for (int i = 0; i < READS; i++) {
                  assertTrue(db.db().readColumns(0, "rows", keys[i], projection, sink));
                }
              });
      // Under a byte per read, where a projected get allocates its array and two 116-byte values.
      assertTrue(bytes < READS, "readColumns allocated " + (double) bytes / READS + " B per read");
      assertTrue(sum[0] > 0);
    }
  }
}
