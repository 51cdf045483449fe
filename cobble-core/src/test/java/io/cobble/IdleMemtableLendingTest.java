package io.cobble;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With {@code memory.lend-idle-memtable-buffers}, a Db with its own cache lends it what the
 * memtables leave of their buffers, less a sixteenth of headroom: read and not written, it caches
 * in every buffer but that sixteenth, the active memtable's included; written, it takes the memory
 * back as the active memtable grows and as memtables are sealed, so memtables and cache stay within
 * capacity × buffer count + cache size. Off, the cache keeps to its size.
 */
class IdleMemtableLendingTest {
  private static final long MEMTABLE = 128 << 10;
  private static final int BUFFERS = 3;
  private static final long CACHE = 128 << 10;
  private static final int KEYS = 4000;
  // What the Db keeps of the memtable buffers when it lends the rest: a sixteenth of them.
  private static final long HEADROOM = BUFFERS * MEMTABLE / 16;
  // The active memtable may pass its capacity by one write.
  private static final long ONE_WRITE_SLACK = 1024;

  @TempDir Path dir;

  private static Config.Builder config() {
    return Config.builder()
        .set("total-buckets", 4)
        .set("memtable.capacity", "128kb")
        .set("memory.memtable-buffer-count", BUFFERS)
        .set("block-cache.size", "128kb")
        .set("sst.target-file-size", "64kb")
        .set("sst.block-size", "1kb")
        .set("compaction.level-base-size", "256kb");
  }

  @Test
  void withoutTheOptionTheCacheKeepsToItsSize() {
    try (Db db = Db.open(dir.resolve("db"), config().build())) {
      db.createFamily("f", List.of(ColumnSpec.of("v")));
      writeAll(db, 0);
      db.flush();
      // A compaction finishing during the reads would drop its inputs' blocks from the cache.
      db.waitForCompactions();
      readAll(db, 0);
      long cached = db.metrics().cacheUsage();
      assertTrue(cached > CACHE / 2 && cached <= CACHE, "cache holds " + cached);
    }
  }

  @Test
  void idleBuffersAreLentToTheCacheAndTakenBackWhenMemtablesAreSealed() {
    Config config = config().set("memory.lend-idle-memtable-buffers", true).build();
    try (Db db = Db.open(dir.resolve("db"), config)) {
      db.createFamily("f", List.of(ColumnSpec.of("v")));
      writeAll(db, 0);
      db.flush();
      // A compaction finishing during the reads would drop its inputs' blocks from the cache.
      db.waitForCompactions();
      readAll(db, 0);
      long cached = db.metrics().cacheUsage();
      // More than the sealed memtables' buffers: the empty active memtable's is lent too.
      assertTrue(
          cached > CACHE + (BUFFERS - 1) * MEMTABLE,
          "reads cached " + cached + " bytes, the active memtable's idle buffer unused");
      assertTrue(cached <= CACHE + BUFFERS * MEMTABLE - HEADROOM, "cache holds " + cached);

      long bound = BUFFERS * MEMTABLE + CACHE + ONE_WRITE_SLACK;
      for (int i = 0; i < KEYS; i++) {
        put(db, i, 1);
        if (i % 7 == 0) {
          get(db, (i * 31) % KEYS, i * 31 % KEYS <= i ? 1 : 0);
        }
        long memtables = db.metrics().memtableBytes();
        long cache = db.metrics().cacheUsage();
        assertTrue(
            memtables + cache <= bound,
            "memtables " + memtables + " and cache " + cache + " after write " + i);
      }
      readAll(db, 1);
    }
  }

  private static void writeAll(Db db, int round) {
    for (int i = 0; i < KEYS; i++) {
      put(db, i, round);
    }
  }

  private static void readAll(Db db, int round) {
    for (int i = 0; i < KEYS; i++) {
      get(db, i, round);
    }
  }

  private static void put(Db db, int i, int round) {
    byte[] key = key(i);
    db.put(Math.floorMod(Arrays.hashCode(key), 4), "f", key, 0, value(i, round));
  }

  private static void get(Db db, int i, int round) {
    byte[] key = key(i);
    byte[][] row = db.get(Math.floorMod(Arrays.hashCode(key), 4), "f", key);
    assertArrayEquals(value(i, round), row[0], "key " + i + " of round " + round);
  }

  private static byte[] key(int i) {
    return ("k" + i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(int i, int round) {
    byte[] v = new byte[300];
    Arrays.fill(v, (byte) (i * 7 + round));
    v[0] = (byte) round;
    return v;
  }
}
