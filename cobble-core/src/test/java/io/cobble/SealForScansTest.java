package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The first scan of a large memtable that was only written (an adaptive memtable still unordered)
 * seals it, so its flush writes its rows as a table, instead of building a skiplist over it; a
 * small one is converted and stays the active memtable. The scan that sealed it and every later one
 * read the same rows.
 */
class SealForScansTest {
  private static final int CAPACITY = 1 << 20;

  @TempDir Path dir;

  private static Config config() {
    return config(2);
  }

  private static Config config(int l0FileLimit) {
    return Config.builder()
        .set("memtable.type", "adaptive")
        .set("memtable.capacity", String.valueOf(CAPACITY))
        .set("compaction.threads", 1)
        .set("compaction.l0-file-limit", l0FileLimit)
        .set("fsync.enabled", false)
        .build();
  }

  private static byte[] key(int i) {
    return String.format("k%06d", i).getBytes(UTF_8);
  }

  private static String value(int i) {
    return value(i, 0);
  }

  private static String value(int i, int round) {
    return "value-of-" + i + "-" + "x".repeat(i % 7) + (round == 0 ? "" : "-round-" + round);
  }

  private static void write(Db db, int rows) {
    write(db, rows, 0);
  }

  private static void write(Db db, int rows, int round) {
    for (int i = 0; i < rows; i++) {
      db.put(0, "default", key(i), 0, value(i, round).getBytes(UTF_8));
    }
  }

  /** The rows of keys [from, to) as {@code key=value}, checked against what was written. */
  private static void assertScan(Db db, int from, int to) {
    assertScan(db, from, to, 0);
  }

  /** As {@link #assertScan(Db, int, int)}, against the values of write round {@code round}. */
  private static void assertScan(Db db, int from, int to, int round) {
    int n = from;
    try (ScanCursor c = db.scan(0, "default", key(from), key(to), ScanOptions.defaults())) {
      while (c.hasNext()) {
        Row r = c.next();
        assertEquals(new String(key(n), UTF_8), new String(r.key(), UTF_8));
        assertEquals(value(n, round), new String(r.column(0), UTF_8));
        n++;
      }
    }
    assertEquals(to, n, "rows the scan returned end at");
  }

  private static DbMetrics awaitSettled(Db db) throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (db.metrics().immutableMemtables() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    db.waitForCompactions();
    return db.metrics();
  }

  @Test
  void scansOfALargeMemTableWhoseWritesStoppedSealItAndItsRowsReachATable() throws Exception {
    try (Db db = Db.open(dir, config())) {
      write(db, 12_000);
      DbMetrics before = db.metrics();
      assertTrue(
          before.memtableBytes() >= CAPACITY / 4 && before.memtableBytes() < CAPACITY,
          "the memtable holds between a quarter and all of its capacity: " + before);
      assertEquals(0, before.flushes());

      assertScan(db, 5_000, 5_010);
      DbMetrics first = db.metrics();
      assertEquals(0, first.immutableMemtables() + first.flushes(), "not sealed yet: " + first);
      assertScan(db, 6_000, 6_010);

      DbMetrics after = db.metrics();
      assertTrue(
          after.immutableMemtables() == 1 || after.flushes() == 1,
          "the scan sealed the memtable: " + after);
      long deadline = System.nanoTime() + 60_000_000_000L;
      while ((db.metrics().flushes() < 1 || db.metrics().immutableMemtables() > 0)
          && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      DbMetrics flushed = db.metrics();
      assertEquals(1, flushed.flushes(), "the sealed memtable was flushed: " + flushed);
      assertEquals(0, flushed.memtableBytes(), "no row is left in a memtable: " + flushed);
      assertScan(db, 5_000, 5_010);
      assertScan(db, 0, 12_000);
    }
  }

  /**
   * Level 0 below its file limit stays as it is while the shard is written; once scans seal the
   * memtable of a shard whose writes stopped, the flush's file and the ones before it are folded
   * into level 1, newest rows winning, and the next write pause of a written shard folds nothing.
   */
  @Test
  void scansThatSealAMemTableFoldLevel0IntoLevel1() throws Exception {
    try (Db db = Db.open(dir, config(4))) {
      write(db, 12_000, 1);
      db.flush();
      DbMetrics written = awaitSettled(db);
      assertEquals(1, written.filesPerLevel()[0], "a flush alone leaves level 0: " + written);
      assertEquals(0, written.compactions() + written.trivialMoves());

      write(db, 12_000, 2);
      assertScan(db, 5_000, 5_010, 2);
      assertScan(db, 6_000, 6_010, 2);
      DbMetrics settled = awaitSettled(db);
      assertEquals(2, settled.flushes(), "the scans sealed the memtable: " + settled);
      assertEquals(0, settled.filesPerLevel()[0], "level 0 was folded: " + settled);
      assertEquals(1, settled.compactions(), "by one merge: " + settled);
      assertScan(db, 0, 12_000, 2);

      write(db, 3_000, 3);
      db.flush();
      DbMetrics again = awaitSettled(db);
      assertEquals(1, again.filesPerLevel()[0], "written again, level 0 stays: " + again);
      assertEquals(1, again.compactions(), again.toString());
      assertScan(db, 0, 3_000, 3);
      assertScan(db, 3_000, 12_000, 2);
    }
  }

  @Test
  void aLargeMemTableWrittenBetweenScansIsConvertedAndStaysActive() {
    try (Db db = Db.open(dir, config())) {
      write(db, 12_000);
      assertScan(db, 5_000, 5_010);
      db.put(0, "default", key(12_000), 0, value(12_000).getBytes(UTF_8));
      for (int scan = 0; scan < 3; scan++) {
        assertScan(db, 11_990, 12_001);
      }
      DbMetrics after = db.metrics();
      assertEquals(0, after.immutableMemtables() + after.flushes(), "nothing was sealed: " + after);
    }
  }

  @Test
  void aSmallMemTableIsConvertedAndStaysActive() {
    try (Db db = Db.open(dir, config())) {
      write(db, 500);
      long bytes = db.metrics().memtableBytes();
      assertTrue(bytes < CAPACITY / 4, "a small memtable: " + bytes);

      assertScan(db, 100, 110);
      assertScan(db, 100, 110);

      DbMetrics after = db.metrics();
      assertEquals(0, after.immutableMemtables(), "nothing was sealed: " + after);
      assertEquals(0, after.flushes(), "nothing was flushed: " + after);
      assertTrue(after.memtableBytes() > 0, "the rows stay in the active memtable: " + after);
      write(db, 600);
      assertScan(db, 0, 600);
      assertEquals(0, db.metrics().flushes());
    }
  }
}
