package io.cobble.rescale;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CobbleException;
import io.cobble.Config;
import io.cobble.Db;
import io.cobble.MemoryPool;
import io.cobble.rescale.ShardOpener.Mode;
import io.cobble.rescale.ShardOpener.Opened;
import io.cobble.schema.ColumnSpec;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.CountingStorage;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.file.FileStorage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The decisions of {@link ShardOpener} and what each opened shard holds, on a local volume. */
class ShardOpenerTest {
  private static final int BUCKETS = 8;
  private static final int KEYS = 4000;

  @TempDir Path tmp;
  private FileStorage volume;
  private int dirs;

  @BeforeEach
  void openVolume() throws Exception {
    volume = FileStorage.open(tmp.resolve("volume"), true);
  }

  @AfterEach
  void closeVolume() throws Exception {
    volume.close();
  }

  private static Config config() {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "16kb")
        .set("compaction.level-base-size", "64kb")
        // These tests look at the files a shard starts with; the background rewrite of files
        // holding given-up buckets would change them (RepeatedRescaleModelTest covers it).
        .set("compaction.foreign-bucket-cleanup", false)
        .build();
  }

  private static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  private static byte[] value(int i, String gen) {
    return (gen + "-" + i + "-" + "v".repeat(60)).getBytes(UTF_8);
  }

  private static boolean inside(List<BucketRange> ranges, int bucket) {
    return ranges.stream().anyMatch(r -> r.contains(bucket));
  }

  /**
   * Writes generation {@code gen} of the keys whose bucket shard {@code shardId} owns, compacts
   * unless asked not to, and publishes a snapshot.
   */
  private ShardRef snapshotShard(String shardId, List<BucketRange> ranges, String gen) {
    return snapshotShard(shardId, ranges, gen, false);
  }

  private ShardRef snapshotShard(
      String shardId, List<BucketRange> ranges, String gen, boolean spanTwoAndThree) {
    try (Db db = Db.open(tmp.resolve("writer-" + dirs++), Rescale.owning(config(), ranges));
        SnapshotManager snapshots = SnapshotManager.open(db, volume, shardId)) {
      for (int i = 0; i < KEYS; i++) {
        if (inside(ranges, i % BUCKETS)) {
          db.put(i % BUCKETS, "default", key(i), 0, value(i, gen));
        }
      }
      db.compactAll();
      if (spanTwoAndThree) {
        // The same rows again, flushed by the snapshot into one L0 file holding buckets 2 and 3.
        for (int i = 2; i < 200; i += BUCKETS) {
          db.put(2, "default", key(i), 0, value(i, gen));
          db.put(3, "default", key(i + 1), 0, value(i + 1, gen));
        }
      }
      return ShardRef.of(shardId, snapshots.snapshot().published().join().id());
    }
  }

  private ShardOpenRequest request(String shardId, List<BucketRange> ranges, ShardRef... sources) {
    return ShardOpenRequest.builder(volume, tmp.resolve("work-" + dirs++), shardId, config())
        .ranges(ranges)
        .sources(List.of(sources))
        .build();
  }

  /** Every key of the owned buckets reads as written by {@code genOf(bucket)}; others refused. */
  private static void check(Db db, List<BucketRange> owned, String... genByBucket) {
    assertEquals(owned, BucketRange.fromPairs(db.ownedBucketRanges()));
    for (int i = 0; i < KEYS; i++) {
      int bucket = i % BUCKETS;
      if (inside(owned, bucket)) {
        byte[][] row = db.get(bucket, "default", key(i));
        assertArrayEquals(value(i, genByBucket[bucket]), row == null ? null : row[0], "key " + i);
      } else {
        int b = bucket;
        int k = i;
        assertThrows(IllegalArgumentException.class, () -> db.get(b, "default", key(k)));
      }
    }
  }

  private static List<BucketRange> range(int lo, int hi) {
    return List.of(BucketRange.of(lo, hi));
  }

  private static long dataFilesIn(Path dir) throws Exception {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".sst") || n.endsWith(".vlog"))
          .count();
    }
  }

  @Test
  void noSnapshotOpensAnEmptyShardOwningTheRanges() {
    ShardOpenRequest r = request("n", range(2, 5));
    assertEquals(Mode.NEW, ShardOpener.plan(r).mode());
    Opened o = ShardOpener.open(r);
    try (Db db = o.db()) {
      assertEquals(range(2, 5), BucketRange.fromPairs(db.ownedBucketRanges()));
      assertNull(db.get(3, "default", key(3)));
      assertEquals(Optional.empty(), o.resumedSnapshot());
    }
  }

  @Test
  void sameRangesResumeInPlaceReadingMetadataOnly() throws Exception {
    ShardRef a = snapshotShard("a", range(0, 7), "g1");
    long dataBytes = new SnapshotStore(volume).require("a", a.snapshotId()).dataBytes();
    CountingStorage counting = new CountingStorage(volume);
    Path work = tmp.resolve("resume");
    ShardOpenRequest r =
        ShardOpenRequest.builder(counting, work, "a", config())
            .range(BucketRange.of(0, 7))
            .source(new SnapshotStore(volume).require("a", a.snapshotId()))
            .build();
    assertEquals(Mode.RESUME, ShardOpener.plan(r).mode());
    Opened o = ShardOpener.open(r);
    long readToOpen = counting.bytesRead.get();
    try (Db db = o.db()) {
      assertEquals(Optional.of(a.snapshotId()), o.resumedSnapshot());
      assertEquals(0, dataFilesIn(work), "the snapshot's files stay on the volume");
      assertTrue(
          readToOpen < dataBytes / 4,
          "opening read " + readToOpen + " of " + dataBytes + " bytes of data files");
      check(db, range(0, 7), "g1", "g1", "g1", "g1", "g1", "g1", "g1", "g1");
    }
  }

  @Test
  void snapshotsHoldingNoRequestedBucketAreIgnored() {
    ShardRef a = snapshotShard("a", range(0, 3), "a1");
    ShardRef b = snapshotShard("b", range(4, 7), "b1");
    ShardOpener.Plan plan = ShardOpener.plan(request("a", range(0, 3), b, a));
    assertEquals(Mode.RESUME, plan.mode());
    assertEquals(1, plan.sources().size());
    assertEquals("a", plan.sources().get(0).shardId());
  }

  @Test
  void ownSnapshotWithFewerBucketsResumesAndShrinks() {
    ShardRef a = snapshotShard("a", range(0, 7), "g1");
    ShardOpenRequest r = request("a", range(2, 5), a);
    assertEquals(Mode.SHRINK, ShardOpener.plan(r).mode());
    Opened o = ShardOpener.open(r);
    try (Db db = o.db()) {
      assertEquals(Optional.of(a.snapshotId()), o.resumedSnapshot());
      check(db, range(2, 5), "g1", "g1", "g1", "g1", "g1", "g1", "g1", "g1");
    }
  }

  @Test
  void subsetOfAnotherShardIsCutInPlaceUnderALease() throws Exception {
    ShardRef s0 = snapshotShard("s0", range(0, 7), "g1");
    ShardOpenRequest r = request("t1", range(4, 7), s0);
    assertEquals(Mode.SHRINK, ShardOpener.plan(r).mode());
    Opened o = ShardOpener.open(r);
    try (Db db = o.db()) {
      assertEquals(Optional.empty(), o.resumedSnapshot());
      assertEquals(0, dataFilesIn(r.workDir()));
      assertEquals(1, new SnapshotStore(volume).leasePaths("t1").size());
      assertEquals(0, db.metrics().flushes(), "nothing was rewritten");
      check(db, range(4, 7), "g1", "g1", "g1", "g1", "g1", "g1", "g1", "g1");
    }
  }

  @Test
  void unionOfSeveralShardsExpandsIntoANewShardWithoutCopying() throws Exception {
    ShardRef a = snapshotShard("a", range(0, 3), "a1");
    ShardRef b = snapshotShard("b", range(4, 7), "b1");
    ShardOpenRequest r = request("u", range(0, 7), a, b);
    assertEquals(Mode.EXPAND, ShardOpener.plan(r).mode());
    try (Db db = ShardOpener.open(r).db()) {
      assertEquals(0, dataFilesIn(r.workDir()));
      assertEquals(0, db.metrics().flushes());
      check(db, range(0, 7), "a1", "a1", "a1", "a1", "b1", "b1", "b1", "b1");
    }
  }

  @Test
  void ownSnapshotPlusOthersAdoptsTheirBuckets() {
    ShardRef a = snapshotShard("a", range(0, 3), "a1");
    ShardRef b = snapshotShard("b", range(4, 5), "b1");
    ShardRef c = snapshotShard("c", range(6, 7), "c1");
    ShardOpenRequest r = request("a", range(0, 7), a, b, c);
    assertEquals(Mode.ADOPT, ShardOpener.plan(r).mode());
    Opened o = ShardOpener.open(r);
    try (Db db = o.db()) {
      assertEquals(Optional.of(a.snapshotId()), o.resumedSnapshot());
      assertEquals(1, new SnapshotStore(volume).leasePaths("a").size());
      check(db, range(0, 7), "a1", "a1", "a1", "a1", "b1", "b1", "c1", "c1");
      db.put(5, "default", key(5), 0, value(5, "new"));
      assertArrayEquals(value(5, "new"), db.get(5, "default", key(5))[0]);
    }
  }

  @Test
  void sourcesWhoseFilesMixBucketsAreCopiedRowByRow() {
    ShardRef s0 = snapshotShard("s0", range(0, 7), "g1", true);
    // Cut at 2|3 and snapshotted before any compaction: d's files still hold bucket 3.
    ShardRef d;
    try (Db db = ShardOpener.open(request("d", range(0, 2), s0)).db();
        SnapshotManager m = SnapshotManager.open(db, volume, "d")) {
      db.addColumn("default", ColumnSpec.of("extra"));
      db.put(1, "default", key(1), 1, "x".getBytes(UTF_8));
      d = ShardRef.of("d", m.snapshot().published().join().id());
    }
    ShardRef e = snapshotShard("e", range(3, 7), "e1");
    ShardOpenRequest r = request("u", range(0, 7), d, e);
    assertEquals(Mode.COPY, ShardOpener.plan(r).mode());
    try (Db db = ShardOpener.open(r).db()) {
      check(db, range(0, 7), "g1", "g1", "g1", "e1", "e1", "e1", "e1", "e1");
      assertArrayEquals("x".getBytes(UTF_8), db.get(1, "default", key(1))[1]);
    }
  }

  /** Shard {@code shardId} with one family of its own, {@code family}, holding its keys. */
  private ShardRef snapshotWithFamily(String shardId, List<BucketRange> ranges, String family) {
    try (Db db = Db.open(tmp.resolve("writer-" + dirs++), Rescale.owning(config(), ranges));
        SnapshotManager snapshots = SnapshotManager.open(db, volume, shardId)) {
      db.createFamily(family, List.of(ColumnSpec.of("v")));
      for (int i = 0; i < KEYS; i++) {
        if (inside(ranges, i % BUCKETS)) {
          db.put(i % BUCKETS, family, key(i), 0, value(i, family));
        }
      }
      return ShardRef.of(shardId, snapshots.snapshot().published().join().id());
    }
  }

  @Test
  void sourcesWithEqualSchemaIdsButOtherFamiliesAreCopiedNotCombined() {
    // Both schemas have the same id and family ids; only the names tell the families apart.
    ShardRef a = snapshotWithFamily("a", range(0, 3), "fa");
    ShardRef b = snapshotWithFamily("b", range(4, 7), "fb");
    ShardOpenRequest r = request("u", range(0, 7), a, b);
    assertEquals(Mode.COPY, ShardOpener.plan(r).mode());
    try (Db db = ShardOpener.open(r).db()) {
      for (int i = 0; i < KEYS; i++) {
        int bucket = i % BUCKETS;
        String own = bucket < 4 ? "fa" : "fb";
        String other = bucket < 4 ? "fb" : "fa";
        assertArrayEquals(value(i, own), db.get(bucket, own, key(i))[0], "key " + i);
        assertNull(db.get(bucket, other, key(i)), "key " + i + " in " + other);
      }
    }
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                Rescale.expandBuckets(
                    tmp.resolve("work-" + dirs++),
                    volume,
                    List.of(a, b),
                    range(0, 7),
                    "v",
                    config()));
    assertTrue(e.getMessage().contains("different schemas"), e.getMessage());
  }

  @Test
  void missingSnapshotIsAClearError() {
    ShardRef a = snapshotShard("a", range(0, 7), "g1");
    CobbleException e =
        assertThrows(
            CobbleException.class,
            () ->
                ShardOpener.open(request("a", range(0, 7), ShardRef.of("a", a.snapshotId() + 5))));
    assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
    assertTrue(e.getMessage().contains("published snapshots are [" + a.snapshotId() + "]"));
  }

  @Test
  void snapshotsThatDoNotCoverTheRangesExactlyOnceAreRefused() {
    ShardRef a = snapshotShard("a", range(0, 3), "a1");
    ShardRef s0 = snapshotShard("s0", range(0, 7), "g1");
    IllegalArgumentException gap =
        assertThrows(
            IllegalArgumentException.class, () -> ShardOpener.plan(request("a", range(0, 7), a)));
    assertTrue(gap.getMessage().contains("bucket 4 is held by none"), gap.getMessage());
    IllegalArgumentException twice =
        assertThrows(
            IllegalArgumentException.class,
            () -> ShardOpener.plan(request("u", range(0, 7), a, s0)));
    assertTrue(
        twice
            .getMessage()
            .contains(
                "bucket 0 is held by snapshot "
                    + a.snapshotId()
                    + " of shard a"
                    + " and snapshot "
                    + s0.snapshotId()
                    + " of shard s0"),
        twice.getMessage());
  }

  @Test
  void snapshotOfAnotherBucketCountIsRefused() {
    ShardRef a = snapshotShard("a", range(0, 7), "g1");
    ShardOpenRequest r =
        ShardOpenRequest.builder(
                volume,
                tmp.resolve("other-count"),
                "a",
                Config.builder().set("total-buckets", 16).build())
            .range(BucketRange.of(0, 7))
            .source(new SnapshotStore(volume).require("a", a.snapshotId()))
            .build();
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ShardOpener.plan(r));
    assertTrue(e.getMessage().contains("has 8 buckets"), e.getMessage());
    assertTrue(e.getMessage().contains("total-buckets is 16"), e.getMessage());
  }

  @Test
  void requestsAreCheckedWhenBuilt() {
    IllegalArgumentException none =
        assertThrows(
            IllegalArgumentException.class,
            () -> ShardOpenRequest.builder(volume, tmp, "a", config()).build());
    assertTrue(none.getMessage().contains("needs the bucket ranges"), none.getMessage());
    IllegalArgumentException overlap =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                ShardOpenRequest.builder(volume, tmp, "a", config())
                    .range(BucketRange.of(0, 3))
                    .range(BucketRange.of(3, 5))
                    .build());
    assertTrue(overlap.getMessage().contains("overlap"), overlap.getMessage());
    IllegalArgumentException outside =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                ShardOpenRequest.builder(volume, tmp, "a", config())
                    .range(BucketRange.of(4, 8))
                    .build());
    assertTrue(outside.getMessage().contains("total-buckets 8"), outside.getMessage());
  }

  /** A shard expanded or cut from snapshots keeps the config's memory pool (rescale in a slot). */
  @Test
  void shardsOpenedFromSnapshotsJoinTheConfigsMemoryPool() {
    ShardRef a = snapshotShard("a", range(0, 3), "a1");
    ShardRef b = snapshotShard("b", range(4, 7), "b1");
    MemoryPool pool = new MemoryPool(1 << 20, 1 << 20);
    Config pooled = config().toBuilder().memoryPool(pool).build();
    ShardOpenRequest expand =
        ShardOpenRequest.builder(volume, tmp.resolve("work-" + dirs++), "u", pooled)
            .ranges(range(0, 7))
            .sources(List.of(a, b))
            .build();
    ShardOpenRequest cut =
        ShardOpenRequest.builder(volume, tmp.resolve("work-" + dirs++), "s", pooled)
            .ranges(range(0, 1))
            .sources(List.of(a))
            .build();
    try (Db u = ShardOpener.open(expand).db();
        Db s = ShardOpener.open(cut).db()) {
      assertSame(pool, u.config().memoryPool());
      assertSame(pool, s.config().memoryPool());
      assertEquals(2, pool.members());
      // Both read files numbered alike through the one cache; each still reads its own rows.
      check(u, range(0, 7), "a1", "a1", "a1", "a1", "b1", "b1", "b1", "b1");
      check(s, range(0, 1), "a1", "a1");
      assertTrue(pool.blockCacheUsage() > 0);
    }
    assertEquals(0, pool.members());
  }
}
