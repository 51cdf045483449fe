package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A newest manifest that fails its checksum reads as absent: the Db opens from the previous one,
 * and that state is whole, because files the previous manifest references outlive it being
 * replaced.
 */
class ManifestFallbackTest {
  private static final int KEYS = 2000;

  @TempDir Path base;

  private static Config config() {
    return Config.builder()
        .set("memtable.capacity", "1mb")
        .set("sst.block-size", "1kb")
        .set("sst.target-file-size", "32kb")
        .set("compaction.l0-file-limit", 8)
        .set("value-separation.threshold", "100")
        .set("compaction.threads", 1)
        .build();
  }

  private static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  private static byte[] value(int round, int i) {
    byte[] v = new byte[i % 7 == 0 ? 200 : 20];
    v[0] = (byte) round;
    v[1] = (byte) i;
    v[2] = (byte) (i >>> 8);
    return v;
  }

  private static List<Path> manifests(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith("MANIFEST-"))
          .filter(p -> !p.getFileName().toString().endsWith(".tmp"))
          .sorted()
          .collect(Collectors.toList());
    }
  }

  private static Path newestManifest(Path dir) throws IOException {
    List<Path> all = manifests(dir);
    return all.get(all.size() - 1);
  }

  private static void assertContent(SingleDb db, Map<Integer, byte[]> expected) {
    for (int i = 0; i < KEYS; i++) {
      byte[] want = expected.get(i);
      if (want == null) {
        assertNull(db.get(key(i)), "key " + i);
      } else {
        assertArrayEquals(want, db.get(key(i)), "key " + i);
      }
    }
    int n = 0;
    try (SingleDb.Cursor c = db.scan(null, null)) {
      while (c.hasNext()) {
        c.next();
        n++;
      }
    }
    assertEquals(expected.size(), n, "rows in a full scan");
  }

  /**
   * The newest manifest is a compaction that dropped every L0 file the previous one lists. Byte
   * flips anywhere in it (magic, version, length, payload, checksum) make the Db open from the
   * previous manifest, whose files must all still be there.
   */
  @ParameterizedTest
  @ValueSource(doubles = {0.0, 0.3, 0.5, 0.9, 1.0})
  void corruptNewestManifestOpensFromThePreviousWithItsFilesIntact(double where)
      throws IOException {
    Path dir = base.resolve("db");
    Map<Integer, byte[]> expected = new TreeMap<>();
    try (SingleDb db = SingleDb.open(dir, config())) {
      for (int round = 0; round < 4; round++) {
        for (int i = round; i < KEYS; i += 2) {
          db.put(key(i), value(round, i));
          expected.put(i, value(round, i));
        }
        db.flush();
      }
      Path beforeCompaction = newestManifest(dir);
      db.db().compactAll();
      assertTrue(
          newestManifest(dir).compareTo(beforeCompaction) > 0, "compaction wrote no manifest");
      assertEquals(2, manifests(dir).size(), "newest and previous manifest: " + manifests(dir));
    }
    Path newest = newestManifest(dir);
    long len = newest.toFile().length();
    FileDamage.flip(newest, Math.min(len - 1, (long) (where * len)));
    for (int reopen = 0; reopen < 2; reopen++) {
      try (SingleDb db = SingleDb.open(dir, config())) {
        assertContent(db, expected);
      }
    }
    // Writing on from the previous state replaces the damaged manifest.
    try (SingleDb db = SingleDb.open(dir, config())) {
      db.put(key(1), value(9, 1));
      expected.put(1, value(9, 1));
      db.flush();
      db.db().compactAll();
    }
    try (SingleDb db = SingleDb.open(dir, config())) {
      assertContent(db, expected);
    }
  }

  /**
   * A reopened Db keeps the files only the fallback manifest lists (a compaction's inputs the last
   * writer kept for it) until its first manifest replaces that fallback, and then deletes them: the
   * directory holds exactly the live files once the writes that replaced it return.
   */
  @Test
  void filesOnlyTheFallbackListsGoOnceAReopenedDbReplacesIt() throws IOException {
    Path dir = base.resolve("db");
    Set<String> inputs;
    try (SingleDb db = SingleDb.open(dir, config())) {
      for (int round = 0; round < 4; round++) {
        for (int i = round; i < KEYS; i += 2) {
          db.put(key(i), value(round, i));
        }
        db.flush();
      }
      inputs = LocalFiles.current(db.db());
      db.db().compactAll();
      inputs.removeAll(LocalFiles.current(db.db()));
    }
    Set<String> onDisk = LocalFiles.onDisk(dir);
    assertFalse(inputs.isEmpty(), "the compaction replaced no file");
    assertTrue(onDisk.containsAll(inputs), "the fallback keeps the compaction's inputs");
    try (SingleDb db = SingleDb.open(dir, config())) {
      assertEquals(LocalFiles.live(db.db()), onDisk, "kept while the fallback lists them");
      db.put(key(1), value(9, 1));
      db.flush();
      db.db().waitForCompactions();
      assertEquals(LocalFiles.live(db.db()), LocalFiles.onDisk(dir));
      Set<String> left = LocalFiles.onDisk(dir);
      left.retainAll(inputs);
      assertEquals(Set.of(), left, "inputs only the replaced fallback listed");
    }
  }

  /** Data only the damaged newest manifest lists is gone; everything before it is intact. */
  @Test
  void corruptNewestManifestLosesOnlyItsOwnFlush() throws IOException {
    Path dir = base.resolve("db");
    Map<Integer, byte[]> expected = new TreeMap<>();
    try (SingleDb db = SingleDb.open(dir, config())) {
      for (int i = 0; i < KEYS; i += 2) {
        db.put(key(i), value(1, i));
        expected.put(i, value(1, i));
      }
      db.flush();
      db.db().compactAll();
      for (int i = 1; i < KEYS; i += 2) {
        db.put(key(i), value(2, i));
      }
      db.delete(key(0));
      db.flush();
    }
    FileDamage.flip(newestManifest(dir), 30);
    try (SingleDb db = SingleDb.open(dir, config())) {
      assertContent(db, expected);
    }
  }

  /** With both manifests damaged there is nothing whole to open: a clear error, not an empty Db. */
  @Test
  void bothManifestsCorruptIsAnErrorNamingTheNewest() throws IOException {
    Path dir = base.resolve("db");
    try (SingleDb db = SingleDb.open(dir, config())) {
      for (int i = 0; i < KEYS; i++) {
        db.put(key(i), value(1, i));
      }
      db.flush();
      db.put(key(1), value(2, 1));
      db.flush();
    }
    List<Path> all = manifests(dir);
    assertEquals(2, all.size(), all.toString());
    for (Path p : all) {
      FileDamage.flip(p, p.toFile().length() / 2);
    }
    Path newest = all.get(1);
    CorruptionException e =
        assertThrows(CorruptionException.class, () -> SingleDb.open(dir, config()));
    assertTrue(e.getMessage().contains(newest.getFileName().toString()), e.getMessage());
  }
}
