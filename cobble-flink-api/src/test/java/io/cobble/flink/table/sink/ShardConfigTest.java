package io.cobble.flink.table.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Db;
import io.cobble.DbMetrics;
import io.cobble.flink.table.layout.TableLayout;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How a sink shard configured by {@link ShardConfig} compacts, on the real engine. */
class ShardConfigTest {

  @TempDir Path dir;

  /**
   * Every flush of upserts spread over the key range overlaps all of L1, so each L0 merge rewrites
   * L1: a shard merges L0 only once four files wait there, not at every second flush.
   */
  @Test
  void level0IsMergedIntoLevel1OnlyOnceFourFilesWait() {
    TableLayout layout = new TableLayout(4, 1);
    try (Db db = Db.open(dir, ShardConfig.of(layout, 0, 1 << 20))) {
      for (int flush = 1; flush <= 3; flush++) {
        writeEveryKey(db, flush);
        DbMetrics m = db.metrics();
        assertEquals(flush, m.filesPerLevel()[0], "L0 files after flush " + flush);
        assertEquals(0, m.compactions(), "merges after flush " + flush);
      }
      writeEveryKey(db, 4);
      DbMetrics m = db.metrics();
      assertEquals(0, m.filesPerLevel()[0], "L0 files after flush 4");
      assertEquals(1, m.compactions(), "merges after flush 4");
    }
  }

  /**
   * A shard restarts only from its snapshots, which fsync what they link or copy, so its flushes
   * and compactions skip their own fsyncs: their files wait, unsynced, for a snapshot to ask.
   */
  @Test
  void flushesAndMergesLeaveTheirFilesToTheSnapshot() {
    TableLayout layout = new TableLayout(4, 1);
    try (Db db = Db.open(dir, ShardConfig.of(layout, 0, 1 << 20))) {
      for (int flush = 1; flush <= 4; flush++) {
        writeEveryKey(db, flush);
      }
      assertEquals(1, db.metrics().compactions());
      Set<Long> live = new TreeSet<>();
      db.versionSet()
          .current()
          .trees()
          .forEach(t -> t.allFiles().forEach(f -> live.add(f.number())));
      assertFalse(live.isEmpty());
      assertTrue(db.filesAwaitingSync().containsAll(live), db.filesAwaitingSync() + " vs " + live);
    }
  }

  /** A lookup's point read scans a restart group: a sink shard keeps them at eight entries. */
  @Test
  void dataBlocksRestartEveryEightEntries() {
    assertEquals(8, ShardConfig.of(new TableLayout(4, 1), 0, 1 << 20).blockRestartInterval());
  }

  /** Upserts every key of every bucket once, flushes and waits for what the flush started. */
  private static void writeEveryKey(Db db, int generation) {
    for (int key = 0; key < 2_000; key++) {
      byte[] value = ByteBuffer.allocate(16).putInt(generation).putInt(key).array();
      db.put(key % 4, TableLayout.FAMILY, ByteBuffer.allocate(8).putLong(key).array(), 0, value);
    }
    db.flush();
    db.waitForCompactions();
  }
}
