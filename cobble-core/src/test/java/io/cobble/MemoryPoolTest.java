package io.cobble;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several Dbs on one {@link MemoryPool}: their memtables stay within the pool's write budget
 * although each Db alone may hold several times that, their blocks share one cache without mixing
 * up equal file numbers, a Db's closing returns its share, the write budget the memtables leave
 * idle is lent to the cache and taken back before memtables use it, and every Db keeps exactly the
 * data written to it. The random run's seed is printed and replayed with {@code
 * -Dcobble.pool.seed}.
 */
class MemoryPoolTest {
  private static final long WRITE_BUDGET = 256 << 10;
  private static final long CACHE_BYTES = 128 << 10;
  private static final int VALUE_MAX = 300;
  // A write is admitted while the pool is under budget, so one write (key, value and the
  // memtable's per-entry overhead) may go over it.
  private static final long ONE_WRITE_SLACK = 1024;
  private static final long DEADLINE_MS = 60_000;

  @TempDir Path dir;

  /**
   * Each Db alone may hold 3 × 128 KB of memtables and three of them 1.1 MB, four times the pool's
   * 256 KB write budget: only the pool keeps them within it.
   */
  private Config config(MemoryPool pool) {
    return Config.builder()
        .set("total-buckets", 4)
        .set("memtable.capacity", "128kb")
        .set("memory.memtable-buffer-count", 3)
        .set("sst.target-file-size", "64kb")
        .set("sst.block-size", "1kb")
        .set("compaction.level-base-size", "256kb")
        .memoryPool(pool)
        .build();
  }

  private static Db withFamily(Db db) {
    if (db.schema().family("f") == null) {
      db.createFamily("f", List.of(ColumnSpec.of("v")));
    }
    return db;
  }

  @Test
  void dbsOnOnePoolStayWithinItsBudgetAndKeepTheirData() {
    long seed = Long.getLong("cobble.pool.seed", System.nanoTime());
    System.out.println(
        "MemoryPoolTest seed=" + seed + " (replay with -Dcobble.pool.seed=" + seed + ")");
    Random rnd = new Random(seed);
    MemoryPool pool = new MemoryPool(WRITE_BUDGET, CACHE_BYTES);
    int n = 3;
    Db[] dbs = new Db[n];
    List<Map<String, byte[]>> models = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      dbs[i] = withFamily(Db.open(dir.resolve("db" + i), config(pool)));
      models.add(new HashMap<>());
    }
    assertEquals(n, pool.members());
    long maxMemtables = 0;
    long maxCache = 0;
    try {
      for (int op = 0; op < 30_000; op++) {
        int d = rnd.nextInt(n);
        // The same keys in every Db, with values that name the Db: a block cached under another
        // Db's key would return another Db's value.
        String key = "k" + rnd.nextInt(4000);
        int bucket = Math.floorMod(key.hashCode(), 4);
        if (rnd.nextInt(10) < 6) {
          byte[] value = value(d, op, 1 + rnd.nextInt(VALUE_MAX));
          dbs[d].put(bucket, "f", bytes(key), 0, value);
          models.get(d).put(key, value);
        } else {
          byte[][] row = dbs[d].get(bucket, "f", bytes(key));
          byte[] expected = models.get(d).get(key);
          if (expected == null) {
            assertNull(row, "seed " + seed + ": db" + d + " key " + key);
          } else {
            assertArrayEquals(expected, row[0], "seed " + seed + ": db" + d + " key " + key);
          }
        }
        long memtables = pool.memtableUsage();
        long cache = pool.blockCacheUsage();
        assertTrue(
            memtables <= WRITE_BUDGET + ONE_WRITE_SLACK,
            "seed " + seed + ": memtables of the pool hold " + memtables + " bytes after op " + op);
        // The cache may hold write budget the memtables leave idle, never more than that.
        assertTrue(
            memtables + cache <= WRITE_BUDGET + CACHE_BYTES + ONE_WRITE_SLACK,
            "seed "
                + seed
                + ": memtables "
                + memtables
                + " and cache "
                + cache
                + " after op "
                + op);
        maxMemtables = Math.max(maxMemtables, memtables);
        maxCache = Math.max(maxCache, cache);
      }
      long memtableSum = 0;
      for (int i = 0; i < n; i++) {
        // Background flushes and compactions still move blocks in and out: read both until they
        // agree (two caches would not).
        long poolCache = pool.blockCacheUsage();
        long dbCache = dbs[i].metrics().cacheUsage();
        for (int tries = 0; poolCache != dbCache && tries < 1000; tries++) {
          Thread.onSpinWait();
          poolCache = pool.blockCacheUsage();
          dbCache = dbs[i].metrics().cacheUsage();
        }
        assertEquals(poolCache, dbCache, "one shared cache");
        assertTrue(dbs[i].metrics().flushes() > 0, "db" + i + " flushed");
        memtableSum += dbs[i].metrics().memtableBytes();
        verify(dbs[i], models.get(i), seed, i);
      }
      assertTrue(memtableSum <= WRITE_BUDGET + ONE_WRITE_SLACK);
      // The run did fill both parts of the pool, so the bounds above were tested.
      assertTrue(maxMemtables > WRITE_BUDGET / 2, "memtables peaked at " + maxMemtables);
      assertTrue(maxCache > 0, "reads went through the shared cache");

      dbs[0].close();
      assertEquals(n - 1, pool.members());
      assertEquals(
          dbs[1].metrics().memtableBytes() + dbs[2].metrics().memtableBytes(),
          pool.memtableUsage(),
          "a closed Db's memtables no longer count");
      dbs[0] = withFamily(Db.open(dir.resolve("db0"), config(pool)));
      verify(dbs[0], models.get(0), seed, 0);
    } finally {
      for (Db db : dbs) {
        if (db != null) {
          db.close();
        }
      }
    }
    assertEquals(0, pool.members());
    assertEquals(0, pool.memtableUsage());
    assertEquals(0, pool.blockCacheUsage(), "closed tables leave no blocks in the cache");
  }

  /**
   * A Db that stopped writing still gives memory back: the largest active memtable of the pool is
   * flushed for a writer of another Db, although its own Db would hold it much longer.
   */
  @Test
  void anIdleDbsMemtableIsFlushedForAnotherDbsWrites() {
    MemoryPool pool = new MemoryPool(WRITE_BUDGET, CACHE_BYTES);
    Config big = config(pool).toBuilder().set("memtable.capacity", "1mb").build();
    try (Db idle = withFamily(Db.open(dir.resolve("idle"), big));
        Db busy = withFamily(Db.open(dir.resolve("busy"), big))) {
      int i = 0;
      while (idle.metrics().memtableBytes() < WRITE_BUDGET * 3 / 4) {
        idle.put(0, "f", bytes("i" + i), 0, value(0, i, 200));
        i++;
      }
      assertEquals(0, idle.metrics().flushes());
      int written = 0;
      long deadline = System.currentTimeMillis() + DEADLINE_MS;
      while (idle.metrics().flushes() == 0) {
        assertTrue(
            System.currentTimeMillis() < deadline,
            "the idle Db's memtable was not flushed within " + DEADLINE_MS + " ms");
        busy.put(0, "f", bytes("b" + written), 0, value(1, written, 200));
        written++;
        assertTrue(pool.memtableUsage() <= WRITE_BUDGET + ONE_WRITE_SLACK);
      }
      assertEquals(0, busy.metrics().flushes(), "the busy Db's smaller memtable stays");
      for (int k = 0; k < i; k++) {
        assertArrayEquals(value(0, k, 200), idle.get(0, "f", bytes("i" + k))[0]);
      }
    }
    assertEquals(0, pool.members());
  }

  /**
   * A Db that is read and not written caches in the write budget its memtables leave idle, beyond
   * the cache's own capacity; once writes come, the cache gives that memory back as the memtables
   * grow, so memtables and cache together never exceed the pool.
   */
  @Test
  void idleWriteBudgetIsLentToTheCacheAndTakenBackAsMemtablesGrow() {
    MemoryPool pool = new MemoryPool(WRITE_BUDGET, CACHE_BYTES);
    Map<String, byte[]> model = new HashMap<>();
    try (Db db = withFamily(Db.open(dir.resolve("lend"), config(pool)))) {
      // About 1.2 MB of rows, ten times the cache's own capacity.
      for (int i = 0; i < 4000; i++) {
        String key = "k" + i;
        byte[] value = value(0, i, VALUE_MAX);
        db.put(Math.floorMod(key.hashCode(), 4), "f", bytes(key), 0, value);
        model.put(key, value);
      }
      db.flush();
      assertEquals(0, pool.memtableUsage());
      // The flush thread lends after it dropped the memtable, which flush() may return before.
      long deadline = System.currentTimeMillis() + DEADLINE_MS;
      while (pool.lentToCache() != WRITE_BUDGET - WRITE_BUDGET / 16
          && System.currentTimeMillis() < deadline) {
        Thread.onSpinWait();
      }
      assertEquals(WRITE_BUDGET - WRITE_BUDGET / 16, pool.lentToCache(), "one step kept back");
      verify(db, model, 0, 0);
      long cached = pool.blockCacheUsage();
      assertTrue(cached > CACHE_BYTES, "reads cached " + cached + " bytes in the lent memory");
      assertTrue(cached <= CACHE_BYTES + pool.lentToCache(), "cache holds " + cached);

      long peakMemtables = 0;
      for (int i = 0; i < 4000; i++) {
        String key = "k" + i;
        byte[] value = value(1, i, VALUE_MAX);
        db.put(Math.floorMod(key.hashCode(), 4), "f", bytes(key), 0, value);
        model.put(key, value);
        long memtables = pool.memtableUsage();
        long cache = pool.blockCacheUsage();
        assertTrue(
            memtables + cache <= WRITE_BUDGET + CACHE_BYTES + ONE_WRITE_SLACK,
            "memtables " + memtables + " and cache " + cache + " after write " + i);
        peakMemtables = Math.max(peakMemtables, memtables);
      }
      assertTrue(peakMemtables > WRITE_BUDGET / 2, "memtables peaked at " + peakMemtables);
      verify(db, model, 0, 0);
    }
    assertEquals(0, pool.blockCacheUsage());
  }

  private static void verify(Db db, Map<String, byte[]> model, long seed, int d) {
    for (Map.Entry<String, byte[]> e : model.entrySet()) {
      int bucket = Math.floorMod(e.getKey().hashCode(), 4);
      byte[][] row = db.get(bucket, "f", bytes(e.getKey()));
      assertArrayEquals(e.getValue(), row[0], "seed " + seed + ": db" + d + " key " + e.getKey());
    }
  }

  private static byte[] value(int db, int op, int length) {
    byte[] v = new byte[length];
    byte[] tag = ("db" + db + "-" + op + "-").getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < length; i++) {
      v[i] = tag[i % tag.length];
    }
    return v;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
