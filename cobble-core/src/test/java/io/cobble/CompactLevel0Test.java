package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#compactLevel0}: every level-0 file ends up merged into level 1 and the Db reads exactly
 * what a model of the writes holds; a merge stopped half-way installs nothing, loses nothing, and a
 * later call (or a reopen) still finds the same rows. Seeded: {@code -Dcobble.test.seed=N} replays
 * a run.
 */
class CompactLevel0Test {
  private static final int KEYS = 3_000;

  @TempDir Path dir;

  private final long seed = Long.getLong("cobble.test.seed", System.nanoTime());
  private final Random rnd = new Random(seed);
  private final Map<String, String> model = new TreeMap<>();

  /** Level 0 is never compacted in the background here, so the test decides when it moves. */
  private static Config config() {
    return Config.builder()
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "32kb")
        .set("compaction.l0-file-limit", "1000")
        .build();
  }

  @Test
  void mergesEveryLevel0FileIntoLevel1AndReadsTheModel() {
    System.out.println("CompactLevel0Test seed=" + seed);
    try (SingleDb db = SingleDb.open(dir, config())) {
      writeRounds(db);
      assertTrue(files(db, 0).size() >= 2, "level-0 files before: " + files(db, 0));
      Set<Long> level1Before = files(db, 1);

      assertTrue(db.db().compactLevel0(() -> false));

      assertEquals(0, files(db, 0).size(), "seed " + seed);
      assertFalse(files(db, 1).isEmpty());
      assertFalse(files(db, 1).equals(level1Before), "level 1 was rewritten with level 0");
      assertMatchesModel(db);
      // Nothing is left to do: a second call changes no file.
      Set<Long> after = allFiles(db);
      assertTrue(db.db().compactLevel0(() -> false));
      assertEquals(after, allFiles(db));
    }
    try (SingleDb db = SingleDb.open(dir, config())) {
      assertEquals(0, files(db, 0).size());
      assertMatchesModel(db);
    }
  }

  @Test
  void aStoppedMergeInstallsNothingAndLosesNothing() {
    System.out.println("CompactLevel0Test seed=" + seed);
    try (SingleDb db = SingleDb.open(dir, config())) {
      writeRounds(db);
      db.flush();
      Set<Long> before = allFiles(db);
      AtomicInteger polls = new AtomicInteger();

      // Stops at the first look, after 1,024 merged rows: the merge is well under way.
      assertFalse(db.db().compactLevel0(() -> polls.incrementAndGet() >= 1));

      assertTrue(polls.get() >= 1, "the stop condition was polled");
      assertEquals(before, allFiles(db), "seed " + seed);
      assertMatchesModel(db);
    }
    try (SingleDb db = SingleDb.open(dir, config())) {
      assertMatchesModel(db);
      assertTrue(files(db, 0).size() >= 2);
      assertTrue(db.db().compactLevel0(() -> false));
      assertEquals(0, files(db, 0).size());
      assertMatchesModel(db);
    }
  }

  /**
   * Puts, overwrites and deletes in rounds, each flushed to its own level-0 file; after the first
   * rounds a full compaction moves what there is to level 1, so level 0 overlaps a populated level.
   */
  private void writeRounds(SingleDb db) {
    for (int round = 0; round < 8; round++) {
      for (int op = 0; op < 1_500; op++) {
        String key = String.format("k%05d", rnd.nextInt(KEYS));
        if (rnd.nextInt(8) == 0) {
          db.delete(b(key));
          model.remove(key);
        } else {
          String value = key + "-" + round + "-" + op + "-" + "x".repeat(rnd.nextInt(40));
          db.put(b(key), b(value));
          model.put(key, value);
        }
      }
      db.flush();
      if (round == 2) {
        db.db().compactAll();
      }
    }
  }

  private void assertMatchesModel(SingleDb db) {
    for (int i = 0; i < KEYS; i++) {
      String key = String.format("k%05d", i);
      String expected = model.get(key);
      if (expected == null) {
        assertNull(db.get(b(key)), "seed " + seed + ", key " + key);
      } else {
        assertArrayEquals(b(expected), db.get(b(key)), "seed " + seed + ", key " + key);
      }
    }
    Map<String, String> scanned = new TreeMap<>();
    try (SingleDb.Cursor c = db.scan(b("k"), b("l"))) {
      while (c.hasNext()) {
        Map.Entry<byte[], byte[]> e = c.next();
        scanned.put(new String(e.getKey(), UTF_8), new String(e.getValue(), UTF_8));
      }
    }
    assertEquals(model, scanned, "seed " + seed);
  }

  private static Set<Long> files(SingleDb db, int level) {
    Set<Long> numbers = new TreeSet<>();
    Version v = db.db().versionSet().current();
    for (Tree tree : v.trees()) {
      if (level < tree.levelCount()) {
        for (FileMeta f : tree.level(level)) {
          numbers.add(f.number());
        }
      }
    }
    return numbers;
  }

  private static Set<Long> allFiles(SingleDb db) {
    Set<Long> numbers = new TreeSet<>();
    for (Tree tree : db.db().versionSet().current().trees()) {
      for (FileMeta f : tree.allFiles()) {
        numbers.add(f.number());
      }
    }
    return numbers;
  }

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }
}
