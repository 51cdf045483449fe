package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ValueSeparationTest {
  @TempDir Path dir;

  private static byte[] big(int seed, int len) {
    byte[] v = new byte[len];
    for (int i = 0; i < len; i++) {
      v[i] = (byte) (seed * 7 + i);
    }
    return v;
  }

  private long vlogFilesOnDisk() throws Exception {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".vlog")).count();
    }
  }

  /**
   * Dead files the previous (fallback) manifest still lists are deleted once a newer manifest
   * replaces it: one more durable write makes the manifest written after the compaction the
   * fallback.
   */
  private static void replaceFallbackManifest(SingleDb db) {
    db.put("~".getBytes(UTF_8), new byte[] {0});
    db.flush();
    db.db().versionSet().awaitDeletions();
  }

  @Test
  void largeValuesLiveInValueLogUntilNoEntryRemains() throws Exception {
    Config config =
        Config.builder()
            .set("memtable.capacity", "32kb")
            .set("value-separation.threshold", "256")
            .build();
    try (SingleDb db = SingleDb.open(dir, config)) {
      for (int i = 0; i < 300; i++) {
        db.put(("k" + i).getBytes(UTF_8), big(i, 1000));
      }
      db.flush();
      assertTrue(db.metrics().vlogFiles() > 0);
      assertTrue(db.metrics().liveBytes() < 300 * 1000 / 2, "tables should hold pointers only");
      db.db().compactAll();
      for (int i = 0; i < 300; i++) {
        assertArrayEquals(big(i, 1000), db.get(("k" + i).getBytes(UTF_8)));
      }
      for (int i = 0; i < 300; i++) {
        db.put(("k" + i).getBytes(UTF_8), new byte[] {1});
      }
      db.db().compactAll();
      assertEquals(0, db.metrics().vlogFiles(), db.metrics().toString());
      replaceFallbackManifest(db);
      assertEquals(0, vlogFilesOnDisk());
    }
  }

  @Test
  void compactionRewritesMostlyDeadValueLogsSoTheyCanBeDeleted() throws Exception {
    Config config =
        Config.builder()
            .set("memtable.capacity", "64kb")
            .set("value-separation.threshold", "256")
            .build();
    try (SingleDb db = SingleDb.open(dir, config)) {
      for (int i = 0; i < 40; i++) {
        db.put(("k" + i).getBytes(UTF_8), big(i, 1000));
      }
      db.flush();
      assertEquals(1, db.metrics().vlogFiles());
      Path firstLog;
      try (Stream<Path> files = Files.list(dir)) {
        firstLog = files.filter(p -> p.toString().endsWith(".vlog")).findFirst().get();
      }
      for (int i = 0; i < 30; i++) {
        db.put(("k" + i).getBytes(UTF_8), big(i + 1, 1000));
      }
      db.db().compactAll();
      // The next compaction touching the table sees the first log only 25% alive.
      db.put("k0".getBytes(UTF_8), big(1, 1000));
      db.db().compactAll();
      for (int i = 0; i < 40; i++) {
        assertArrayEquals(big(i < 30 ? i + 1 : i, 1000), db.get(("k" + i).getBytes(UTF_8)));
      }
      // The first log kept only 10 of 40 values alive, so they were copied and it was deleted.
      replaceFallbackManifest(db);
      assertFalse(Files.exists(firstLog), firstLog + " should have been dropped");
      assertEquals(db.metrics().vlogFiles(), vlogFilesOnDisk());
    }
  }

  @Test
  void separatedMergeOperandsCombineCorrectlyInCompaction() {
    Config config =
        Config.builder()
            .set("memtable.capacity", "32kb")
            .set("value-separation.threshold", "64")
            .build();
    try (Db db = Db.open(dir, config)) {
      db.createFamily("c", Arrays.asList(ColumnSpec.merging("text", "concat")));
      byte[] k = "k".getBytes(UTF_8);
      byte[] expected = new byte[0];
      for (int round = 0; round < 5; round++) {
        byte[] part = big(round, 100);
        db.merge(0, "c", k, 0, part);
        byte[] next = Arrays.copyOf(expected, expected.length + part.length);
        System.arraycopy(part, 0, next, expected.length, part.length);
        expected = next;
        db.flush();
      }
      assertArrayEquals(expected, db.get(0, "c", k)[0]);
      db.compactAll();
      assertArrayEquals(expected, db.get(0, "c", k)[0]);
    }
  }
}
