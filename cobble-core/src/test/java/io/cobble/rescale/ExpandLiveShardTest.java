package io.cobble.rescale;

import static io.cobble.rescale.RescaleTest.BUCKETS;
import static io.cobble.rescale.RescaleTest.KEYS;
import static io.cobble.rescale.RescaleTest.config;
import static io.cobble.rescale.RescaleTest.key;
import static io.cobble.rescale.RescaleTest.ranges;
import static io.cobble.rescale.RescaleTest.value;
import static io.cobble.rescale.RescaleTest.write;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.reader.Reader;
import io.cobble.reader.ScanSplit;
import io.cobble.reader.SplitScanner;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.GlobalSnapshotCoordinator;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.file.FileStorage;
import io.cobble.storage.s3.S3Volumes;
import io.cobble.testing.S3ProxyServer;
import io.cobble.version.ExternalFiles;
import io.cobble.version.OwnedRanges;
import io.cobble.version.PendingExpansion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Rescale.expandBuckets into a live shard that keeps its own buckets. */
class ExpandLiveShardTest {
  @TempDir Path tmp;

  /** A shard that compacts only when told: its files keep rows of buckets it gave up. */
  static Config lazy(int retention) {
    return Config.builder()
        .setAll(config(retention).values())
        .set("compaction.l0-file-limit", 1000)
        .set("compaction.level-base-size", "1gb")
        .build();
  }

  /** Checks every key of every owned bucket against the generation written to its bucket. */
  static void checkGens(Db db, int[] gens) {
    int checked = 0;
    for (int i = 0; i < KEYS; i++) {
      int b = i % BUCKETS;
      if (RescaleTest.owns(db, b)) {
        byte[][] row = db.get(b, "default", key(i));
        assertArrayEquals(value(i, gens[b]), row == null ? null : row[0], "key " + i);
        checked++;
      }
    }
    assertTrue(checked > 0);
  }

  @Test
  void threeShardsToTwoOnALocalVolume() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true)) {
      threeShardsToTwoLiveShardsAbsorbTheThird(volume);
    }
  }

  @Test
  void threeShardsToTwoOnS3() throws Exception {
    try (S3ProxyServer server = S3ProxyServer.start(tmp.resolve("s3"), "vol");
        Storage volume = S3Volumes.open(server, "vol/snapshots")) {
      threeShardsToTwoLiveShardsAbsorbTheThird(volume);
    }
  }

  private void threeShardsToTwoLiveShardsAbsorbTheThird(Storage volume) throws Exception {
    SnapshotStore store = new SnapshotStore(volume);
    Db s0 = Db.open(tmp.resolve("s0"), config(1));
    write(s0, 1);
    s0.flush();
    long origin;
    try (SnapshotManager m0 = SnapshotManager.open(s0, volume, "s0")) {
      origin = m0.snapshot().published().join().id();
    }
    s0.close();
    List<BucketRange> three =
        List.of(BucketRange.of(0, 2), BucketRange.of(3, 5), BucketRange.of(6, 7));
    Db[] t = new Db[3];
    SnapshotManager[] m = new SnapshotManager[3];
    for (int i = 0; i < 3; i++) {
      t[i] =
          Rescale.expandBuckets(
              tmp.resolve("t" + i),
              volume,
              List.of(ShardRef.of("s0", origin)),
              List.of(three.get(i)),
              "t" + i,
              i == 2 ? lazy(1) : config(1));
      m[i] = SnapshotManager.open(t[i], volume, "t" + i);
    }
    // Each shard writes its own generation. t0 and t1 compact (dropping the buckets they do not
    // own); t2 does not, so its snapshot still holds s0's files with rows of every bucket.
    write(t[0], 2);
    t[0].compactAll();
    write(t[1], 3);
    t[1].compactAll();
    write(t[2], 4);
    t[2].flush();
    for (SnapshotManager mm : m) {
      mm.snapshot().published().join();
    }
    long c = m[2].published().get(m[2].published().size() - 1);

    Set<String> before = new HashSet<>(ExternalFiles.read(t[0].directory()).get().files().values());
    // 3 -> 2: t0 absorbs bucket 6 and t1 bucket 7 while they keep serving their own buckets.
    Rescale.expandBuckets(m[0], List.of(ShardRef.of("t2", c)), ranges(6, 6));
    Rescale.expandBuckets(m[1], List.of(ShardRef.of("t2", c)), ranges(7, 7));
    assertArrayEquals(new int[] {0, 2, 6, 6}, t[0].ownedBucketRanges());
    assertArrayEquals(new int[] {3, 5, 7, 7}, t[1].ownedBucketRanges());
    int[] gens = {2, 2, 2, 3, 3, 3, 4, 4};
    checkGens(t[0], gens);
    checkGens(t[1], gens);
    assertEquals(1, store.leasePaths("t0").size());
    assertEquals(1, store.leasePaths("t1").size());
    // t2's own files (its flushes of bucket 6 and 7) are read in place, not copied.
    Set<String> adopted =
        new HashSet<>(ExternalFiles.read(t[0].directory()).get().files().values());
    Set<String> t2Files = new HashSet<>();
    for (SnapshotFile f : store.require("t2", c).files()) {
      t2Files.add(f.volumePath());
    }
    adopted.retainAll(t2Files);
    assertTrue(adopted.stream().anyMatch(p -> p.startsWith("data/t2/")), adopted.toString());

    // The absorbed shard moves on and its retention expires the snapshot the others adopted from;
    // the leases keep those files.
    write(t[2], 5);
    t[2].compactAll();
    m[2].snapshot().published().join();
    assertFalse(store.snapshotIds("t2").contains(c));
    m[2].close();
    t[2].close();
    Set<String> t2Now = new HashSet<>();
    for (SnapshotFile f : store.requireLatest("t2").files()) {
      t2Now.add(f.volumePath());
    }
    int onlyLeased = 0;
    for (String p : adopted) {
      assertTrue(volume.exists(p), "leased file survives the source's retention: " + p);
      onlyLeased += t2Now.contains(p) ? 0 : 1;
    }
    assertTrue(onlyLeased > 0, "some adopted files are kept by the leases alone");
    checkGens(t[0], gens);

    // New writes to an absorbed bucket, then each target's next snapshot owns the adopted files
    // and ends its lease.
    for (int i = 6; i < KEYS; i += BUCKETS * 2) {
      t[0].put(6, "default", key(i), 0, value(i, 6));
    }
    for (int i = 0; i < 2; i++) {
      ShardSnapshot s = m[i].snapshot().published().join();
      assertTrue(store.leasePaths("t" + i).isEmpty(), "lease ends with the snapshot");
      assertEquals(i == 0 ? ranges(0, 2).get(0) : BucketRange.of(3, 5), s.ranges().get(0));
      assertEquals(2, s.ranges().size());
    }
    Set<String> owned = new HashSet<>();
    for (SnapshotFile f : store.requireLatest("t0").files()) {
      owned.add(f.volumePath());
    }
    assertTrue(owned.stream().anyMatch(adopted::contains), "t0's snapshot refers to adopted files");

    // Compaction across old and new ranges; a global snapshot of the two shards scans whole.
    t[0].compactAll();
    t[1].compactAll();
    List<ShardRef> parts = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      parts.add(ShardRef.of("t" + i, m[i].snapshot().published().join().id()));
    }
    new GlobalSnapshotCoordinator(volume, BUCKETS, 0).commit(parts);
    Set<Integer> seen = new HashSet<>();
    try (Reader reader = Reader.open(volume, config(0))) {
      for (ScanSplit split : reader.splits("default")) {
        try (SplitScanner s = reader.scan(split)) {
          while (s.hasNext()) {
            Row r = s.next();
            int i = Integer.parseInt(new String(r.key(), UTF_8).substring(4));
            assertEquals(i % BUCKETS, s.bucket());
            int gen = s.bucket() == 6 && i % (BUCKETS * 2) == 6 ? 6 : gens[s.bucket()];
            assertArrayEquals(value(i, gen), r.column(0), "key " + i);
            assertTrue(seen.add(i));
          }
        }
      }
    }
    assertEquals(KEYS, seen.size(), "the splits cover every bucket once");
    for (int i = 0; i < 2; i++) {
      m[i].close();
      Path dir = t[i].directory();
      t[i].close();
      try (Db reopened = Db.open(dir, config(0), volume)) {
        assertEquals(4, reopened.ownedBucketRanges().length);
        int[] now = gens.clone();
        if (i == 1) {
          checkGens(reopened, now);
        } else {
          for (int k = 0; k < KEYS; k++) {
            if (k % BUCKETS < 3 || k % BUCKETS == 6) {
              int gen = k % BUCKETS == 6 && k % (BUCKETS * 2) == 6 ? 6 : gens[k % BUCKETS];
              assertArrayEquals(value(k, gen), reopened.get(k % BUCKETS, "default", key(k))[0]);
            }
          }
        }
      }
    }
  }

  /**
   * Shard a gives buckets 4-7 to b without compacting (its files and memtable keep those rows), b
   * changes them (new values, rows deleted and compacted away), and a takes them back: none of a's
   * old rows of 4-7 may show, before or after compaction and reopen.
   */
  @Test
  void aBucketTakenBackFromACompactedSourceNeverShowsItsStaleRows() throws Exception {
    givenUpAndTakenBack(true);
  }

  /** The source's files still hold a's rows of 0-3 from before the split: those are copied out. */
  @Test
  void aBucketTakenBackFromAnUncompactedSourceNeverShowsItsStaleRows() throws Exception {
    givenUpAndTakenBack(false);
  }

  private void givenUpAndTakenBack(boolean sourceCompacts) throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true)) {
      Path aDir = tmp.resolve("a");
      Db a = Db.open(aDir, config(0));
      SnapshotManager ma = SnapshotManager.open(a, volume, "a");
      write(a, 1);
      a.flush();
      long s1 = ma.snapshot().published().join().id();
      Db b =
          Rescale.expandBuckets(
              tmp.resolve("b"),
              volume,
              List.of(ShardRef.of("a", s1)),
              ranges(4, 7),
              "b",
              config(0));
      SnapshotManager mb = SnapshotManager.open(b, volume, "b");
      // a writes on before it learns of the rescale: stale rows in files and in the memtable.
      write(a, 2);
      a.flush();
      for (int i = 4; i < KEYS; i += BUCKETS) {
        a.put(i % BUCKETS, "default", key(i), 0, value(i, 3));
      }
      Rescale.shrinkBuckets(a, ranges(0, 3));
      for (int i = 0; i < KEYS; i++) {
        int bucket = i % BUCKETS;
        if (bucket >= 4) {
          if (i % 3 == 0) {
            b.deleteRow(bucket, "default", key(i));
          } else if (i % 3 == 1) {
            b.put(bucket, "default", key(i), 0, value(i, 4));
          }
        }
      }
      if (sourceCompacts) {
        b.compactAll();
      }
      long sb = mb.snapshot().published().join().id();

      IllegalArgumentException owned =
          assertThrows(
              IllegalArgumentException.class,
              () -> Rescale.expandBuckets(ma, List.of(ShardRef.of("b", sb)), ranges(3, 5)));
      assertTrue(owned.getMessage().contains("already owns 0-3"), owned.getMessage());
      IllegalArgumentException twice =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  Rescale.expandBuckets(
                      ma, List.of(ShardRef.of("b", sb), ShardRef.of("a", s1)), ranges(4, 7)));
      assertTrue(twice.getMessage().contains("bucket 4 is held by 2"), twice.getMessage());
      assertArrayEquals(
          new int[] {0, 3}, a.ownedBucketRanges(), "a refused expansion changes nothing");

      Rescale.expandBuckets(ma, List.of(ShardRef.of("b", sb)), ranges(4, 7));
      assertArrayEquals(new int[] {0, 7}, a.ownedBucketRanges());
      verifyTakenBack(a);
      a.compactAll();
      verifyTakenBack(a);
      ma.snapshot().published().join();
      ma.close();
      a.close();
      try (Db reopened = Db.open(aDir, config(0), volume)) {
        verifyTakenBack(reopened);
      }
      mb.close();
      b.close();
    }
  }

  /**
   * The three metadata files an expansion changes (EXTERNAL, the manifest, RANGES), left as a crash
   * between them leaves them: the Db reopens with all of the expansion or none of it.
   */
  @Test
  void aCrashDuringExpansionReopensWithAllOrNothing() throws Exception {
    // A shard opened from a snapshot owns the ranges its config names until it changes them.
    Config half = Config.builder().setAll(config(0).values()).set("bucket-ranges", "0-3").build();
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true)) {
      Db src = Db.open(tmp.resolve("src"), config(0));
      write(src, 1);
      src.flush();
      long s1;
      try (SnapshotManager m = SnapshotManager.open(src, volume, "src")) {
        s1 = m.snapshot().published().join().id();
      }
      src.close();
      // b holds 4-7 in files of its own, which hold no rows of a's buckets.
      long sb;
      try (Db b =
              Rescale.expandBuckets(
                  tmp.resolve("b"),
                  volume,
                  List.of(ShardRef.of("src", s1)),
                  ranges(4, 7),
                  "b",
                  config(0));
          SnapshotManager mb = SnapshotManager.open(b, volume, "b")) {
        b.compactAll();
        sb = mb.snapshot().published().join().id();
      }
      Path dir = tmp.resolve("a");
      Path copy = tmp.resolve("a-before");
      Db a =
          Rescale.expandBuckets(
              dir, volume, List.of(ShardRef.of("src", s1)), ranges(0, 3), "a", half);
      write(a, 2);
      a.close();
      copyDir(dir, copy);
      Map<Long, String> before = ExternalFiles.read(dir).get().files();

      a = Db.open(dir, half, volume);
      try (SnapshotManager ma = SnapshotManager.open(a, volume, "a")) {
        Rescale.expandBuckets(ma, List.of(ShardRef.of("b", sb)), ranges(4, 7));
      }
      a.close();
      ExternalFiles after = ExternalFiles.read(dir).get();
      List<Long> added = new ArrayList<>(after.files().keySet());
      added.removeAll(before.keySet());
      assertFalse(added.isEmpty());
      int[] gens = {2, 2, 2, 2, 1, 1, 1, 1};
      int[] grown = {0, 7};

      // Crash after the manifest, before RANGES: rolled forward.
      OwnedRanges.write(dir, new int[] {0, 3});
      new PendingExpansion(grown, added, added, true).write(dir);
      try (Db reopened = Db.open(dir, half, volume)) {
        assertArrayEquals(grown, reopened.ownedBucketRanges());
        checkGens(reopened, gens);
      }
      assertFalse(Files.exists(dir.resolve(PendingExpansion.FILE_NAME)));
      try (Db reopened = Db.open(dir, half, volume)) {
        assertArrayEquals(grown, reopened.ownedBucketRanges());
      }

      // Crash after EXTERNAL grew, before the manifest: rolled back, and the numbers EXTERNAL
      // listed are free again for the Db's own files.
      after.write(copy);
      new PendingExpansion(grown, added, added, true).write(copy);
      try (Db reopened = Db.open(copy, half, volume)) {
        assertArrayEquals(new int[] {0, 3}, reopened.ownedBucketRanges());
        assertEquals(before, ExternalFiles.read(copy).get().files());
        checkGens(reopened, gens);
        write(reopened, 3);
        reopened.compactAll();
        checkGens(reopened, new int[] {3, 3, 3, 3, 0, 0, 0, 0});
      }
      try (Db reopened = Db.open(copy, half, volume)) {
        checkGens(reopened, new int[] {3, 3, 3, 3, 0, 0, 0, 0});
      }
    }
  }

  private static void copyDir(Path from, Path to) throws Exception {
    Files.createDirectories(to);
    try (Stream<Path> files = Files.list(from)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        if (!p.getFileName().toString().equals("LOCK")) {
          Files.copy(p, to.resolve(p.getFileName()));
        }
      }
    }
  }

  private static void verifyTakenBack(Db a) {
    for (int i = 0; i < KEYS; i++) {
      int bucket = i % BUCKETS;
      byte[][] row = a.get(bucket, "default", key(i));
      if (bucket < 4) {
        assertArrayEquals(value(i, 2), row[0], "key " + i);
      } else if (i % 3 == 0) {
        assertNull(row, "deleted by b: key " + i);
      } else {
        assertArrayEquals(value(i, i % 3 == 1 ? 4 : 1), row[0], "key " + i);
      }
    }
    List<String> got = new ArrayList<>();
    try (ScanCursor c = a.scan(5, "default", null, null, ScanOptions.defaults())) {
      while (c.hasNext()) {
        got.add(new String(c.next().key(), UTF_8));
      }
    }
    List<String> want = new ArrayList<>();
    for (int i = 5; i < KEYS; i += BUCKETS) {
      if (i % 3 != 0) {
        want.add(new String(key(i), UTF_8));
      }
    }
    want.sort(null);
    assertEquals(want, got);
  }
}
