package io.cobble.rescale;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CobbleException;
import io.cobble.Config;
import io.cobble.Db;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.StorageProviders;
import io.cobble.testing.S3ProxyServer;
import io.cobble.version.RemotePrimary;
import java.net.URI;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restore, shrink and expansion of a shard whose primary volume is object storage (S3Proxy with
 * signature authentication on 127.0.0.1), for every way {@link ShardOpener} opens a shard. Each
 * check reopens the primary from a second, empty local directory (another machine) with the
 * snapshot volume closed, so it proves the state lives on the primary alone.
 */
@Timeout(180)
class RemotePrimaryRescaleTest {
  static final int BUCKETS = 8;
  static final int KEYS = 800;

  @TempDir Path tmp;
  private S3ProxyServer server;
  private Storage volume;
  private Storage primary;
  private int dirs;

  @BeforeEach
  void start() throws Exception {
    server = S3ProxyServer.start(tmp.resolve("s3"), "vol");
    volume = open(server, "snapshots");
    primary = open(server, "primary/t");
  }

  @AfterEach
  void stop() throws Exception {
    primary.close();
    volume.close();
    server.close();
  }

  static Storage open(S3ProxyServer server, String prefix) throws Exception {
    return StorageProviders.open(
        URI.create("s3://vol/" + prefix), StorageOptions.of(server.clientOptions()));
  }

  static Config config() {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "16kb")
        .set("compaction.level-base-size", "64kb")
        .set("value-separation.threshold", "150")
        .set("fsync.enabled", false)
        .set("remote-cache.chunk-size", "4kb")
        .build();
  }

  /**
   * A writer whose files keep the rows of buckets it gave up: the background cleanup would
   * otherwise rewrite them between the shrink and the snapshot, and the files would no longer mix
   * buckets (the case the tests below are about).
   */
  private static Config keepingForeignRows() {
    return config().toBuilder().set("compaction.foreign-bucket-cleanup", false).build();
  }

  static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  /** Every fifth value is long enough for a value log. */
  static byte[] value(int i, String gen) {
    String v = gen + "-" + i + "-";
    return (i % 5 == 0 ? v + "x".repeat(200) : v + "y".repeat(20)).getBytes(UTF_8);
  }

  static List<BucketRange> range(int lo, int hi) {
    return List.of(BucketRange.of(lo, hi));
  }

  static boolean inside(List<BucketRange> ranges, int bucket) {
    return ranges.stream().anyMatch(r -> r.contains(bucket));
  }

  /** Writes generation {@code gen} of shard {@code shardId}'s keys (locally) and snapshots it. */
  static ShardRef snapshotShard(
      Path dir, Storage volume, String shardId, List<BucketRange> ranges, String gen) {
    try (Db db = Db.open(dir, Rescale.owning(config(), ranges));
        SnapshotManager snapshots = SnapshotManager.open(db, volume, shardId)) {
      for (int i = 0; i < KEYS; i++) {
        if (inside(ranges, i % BUCKETS)) {
          db.put(i % BUCKETS, "default", key(i), 0, value(i, gen));
        }
      }
      db.compactAll();
      // Some rows again, so a snapshot holds L0 files over sorted levels.
      for (int i = 0; i < KEYS; i += 7) {
        if (inside(ranges, i % BUCKETS)) {
          db.put(i % BUCKETS, "default", key(i), 0, value(i, gen));
        }
      }
      return ShardRef.of(shardId, snapshots.snapshot().published().join().id());
    }
  }

  private ShardRef snapshotShard(String shardId, List<BucketRange> ranges, String gen) {
    return snapshotShard(tmp.resolve("writer-" + dirs++), volume, shardId, ranges, gen);
  }

  private ShardOpenRequest request(String shardId, List<BucketRange> ranges, ShardRef... sources) {
    return ShardOpenRequest.builder(volume, tmp.resolve("work-" + dirs++), shardId, config())
        .primary(primary)
        .ranges(ranges)
        .sources(List.of(sources))
        .build();
  }

  /** Every key of the owned buckets reads as generation {@code gens[bucket]}; others refused. */
  static void check(Db db, List<BucketRange> owned, String... gens) {
    assertEquals(owned, BucketRange.fromPairs(db.ownedBucketRanges()));
    for (int i = 0; i < KEYS; i++) {
      int bucket = i % BUCKETS;
      if (inside(owned, bucket)) {
        byte[][] row = db.get(bucket, "default", key(i));
        assertArrayEquals(value(i, gens[bucket]), row == null ? null : row[0], "key " + i);
      } else {
        int k = i;
        assertThrows(IllegalArgumentException.class, () -> db.get(bucket, "default", key(k)));
      }
    }
  }

  /** Opens the primary from a new, empty local directory: what another machine would see. */
  private Db reopenElsewhere() {
    return Db.open(primary, tmp.resolve("elsewhere-" + dirs++), config());
  }

  private void openCheckAndReopen(
      ShardOpenRequest request, ShardOpener.Mode mode, List<BucketRange> owned, String... gens)
      throws Exception {
    ShardOpener.Opened opened = ShardOpener.open(request);
    assertEquals(mode, opened.plan().mode());
    try (Db db = opened.db()) {
      check(db, owned, gens);
      db.compactAll(); // reads every copied file, and compaction drops rows of unowned buckets
      check(db, owned, gens);
    }
    volume.close(); // the primary alone holds the state now
    try (Db db = reopenElsewhere()) {
      check(db, owned, gens);
    } finally {
      volume = open(server, "snapshots");
    }
  }

  @Test
  void sameRangesResumeOntoTheRemotePrimary() throws Exception {
    ShardRef own = snapshotShard("t", range(0, 7), "a");
    openCheckAndReopen(
        request("t", range(0, 7), own),
        ShardOpener.Mode.RESUME,
        range(0, 7),
        "a",
        "a",
        "a",
        "a",
        "a",
        "a",
        "a",
        "a");
  }

  @Test
  void ownSnapshotWithFewerBucketsResumesAndShrinks() throws Exception {
    ShardRef own = snapshotShard("t", range(0, 7), "a");
    openCheckAndReopen(
        request("t", range(2, 5), own),
        ShardOpener.Mode.SHRINK,
        range(2, 5),
        "-",
        "-",
        "a",
        "a",
        "a",
        "a",
        "-",
        "-");
  }

  @Test
  void subsetOfAnotherShardIsCopiedOntoThePrimary() throws Exception {
    ShardRef other = snapshotShard("o", range(0, 7), "o");
    openCheckAndReopen(
        request("t", range(4, 7), other),
        ShardOpener.Mode.SHRINK,
        range(4, 7),
        "-",
        "-",
        "-",
        "-",
        "o",
        "o",
        "o",
        "o");
  }

  @Test
  void unionOfSeveralShardsExpandsOntoThePrimary() throws Exception {
    ShardRef b = snapshotShard("b", range(0, 3), "b");
    ShardRef c = snapshotShard("c", range(4, 7), "c");
    openCheckAndReopen(
        request("t", range(0, 7), b, c),
        ShardOpener.Mode.EXPAND,
        range(0, 7),
        "b",
        "b",
        "b",
        "b",
        "c",
        "c",
        "c",
        "c");
  }

  @Test
  void ownSnapshotPlusOthersAdoptsTheirBuckets() throws Exception {
    ShardRef own;
    try (Db db = Db.open(tmp.resolve("own"), Rescale.owning(keepingForeignRows(), range(0, 7)));
        SnapshotManager snapshots = SnapshotManager.open(db, volume, "t")) {
      for (int i = 0; i < KEYS; i++) {
        db.put(i % BUCKETS, "default", key(i), 0, value(i, "a"));
      }
      db.flush();
      db.shrinkBuckets(new int[] {0, 3});
      own = ShardRef.of("t", snapshots.snapshot().published().join().id());
    }
    ShardRef c = snapshotShard("c", range(4, 7), "c");
    // The own snapshot's files still hold rows of 4-7 (generation a): they must not resurface.
    openCheckAndReopen(
        request("t", range(0, 7), own, c),
        ShardOpener.Mode.ADOPT,
        range(0, 7),
        "a",
        "a",
        "a",
        "a",
        "c",
        "c",
        "c",
        "c");
  }

  @Test
  void sourcesWhoseFilesMixBucketsAreCopiedRowByRow() throws Exception {
    ShardRef m;
    try (Db db = Db.open(tmp.resolve("mixed"), Rescale.owning(keepingForeignRows(), range(0, 7)));
        SnapshotManager snapshots = SnapshotManager.open(db, volume, "m")) {
      for (int i = 0; i < KEYS; i++) {
        db.put(i % BUCKETS, "default", key(i), 0, value(i, "m"));
      }
      db.flush();
      db.shrinkBuckets(new int[] {4, 7}); // its files still hold rows of 0-3
      m = ShardRef.of("m", snapshots.snapshot().published().join().id());
    }
    ShardRef c = snapshotShard("c", range(0, 3), "c");
    openCheckAndReopen(
        request("t", range(0, 7), m, c),
        ShardOpener.Mode.COPY,
        range(0, 7),
        "c",
        "c",
        "c",
        "c",
        "m",
        "m",
        "m",
        "m");
  }

  @Test
  void shrinkOnARemotePrimaryIsDurableOnThePrimary() throws Exception {
    try (Db db = Db.open(primary, tmp.resolve("live"), Rescale.owning(config(), range(0, 7)))) {
      for (int i = 0; i < KEYS; i++) {
        db.put(i % BUCKETS, "default", key(i), 0, value(i, "w"));
      }
      db.flush();
      db.shrinkBuckets(new int[] {1, 2, 6, 6});
      check(db, List.of(BucketRange.of(1, 2), BucketRange.of(6, 6)), gens("w"));
    }
    try (Db db = reopenElsewhere()) {
      List<BucketRange> kept = List.of(BucketRange.of(1, 2), BucketRange.of(6, 6));
      check(db, kept, gens("w"));
      db.compactAll();
      check(db, kept, gens("w"));
      assertThrows(IllegalArgumentException.class, () -> db.shrinkBuckets(new int[] {0, 2}));
    }
  }

  @Test
  void liveExpansionCopiesTheAdoptedFilesOntoThePrimary() throws Exception {
    ShardRef c = snapshotShard("c", range(4, 7), "c");
    try (Db db = Db.open(primary, tmp.resolve("live"), Rescale.owning(config(), range(0, 7)));
        SnapshotManager snapshots = SnapshotManager.open(db, volume, "t")) {
      for (int i = 0; i < KEYS; i++) {
        db.put(i % BUCKETS, "default", key(i), 0, value(i, "w"));
      }
      db.flush();
      db.shrinkBuckets(new int[] {0, 3}); // its files keep rows of 4-7 (generation w)
      Rescale.expandBuckets(snapshots, List.of(c), range(4, 7));
      check(db, range(0, 7), "w", "w", "w", "w", "c", "c", "c", "c");
      snapshots.snapshot().published().join();
    }
    volume.close();
    try (Db db = reopenElsewhere()) {
      check(db, range(0, 7), "w", "w", "w", "w", "c", "c", "c", "c");
      db.compactAll();
      check(db, range(0, 7), "w", "w", "w", "w", "c", "c", "c", "c");
    } finally {
      volume = open(server, "snapshots");
    }
    // The expanded shard's snapshot restores elsewhere, locally.
    ShardSnapshot latest = new SnapshotStore(volume).latest("t").orElseThrow();
    try (Db db =
        ShardOpener.open(
                ShardOpenRequest.builder(volume, tmp.resolve("local"), "t", config())
                    .ranges(range(0, 7))
                    .source(latest)
                    .build())
            .db()) {
      check(db, range(0, 7), "w", "w", "w", "w", "c", "c", "c", "c");
    }
  }

  @Test
  void anInterruptedRestoreFailsEveryOpenUntilItRunsAgain() throws Exception {
    ShardRef own = snapshotShard("t", range(0, 7), "a");
    try (Db db = ShardOpener.open(request("t", range(0, 7), own)).db()) {
      check(db, range(0, 7), gens("a"));
    }
    // What a crash part way through the next restore leaves.
    primary.publishAtomically(RemotePrimary.RESTORING, new byte[] {1});
    CobbleException e = assertThrows(CobbleException.class, this::reopenElsewhere);
    assertTrue(e.getMessage().contains("interrupted restore"), e.getMessage());
    assertTrue(e.getMessage().contains(primary.uri().toString()), e.getMessage());
    try (Db db = ShardOpener.open(request("t", range(0, 7), own)).db()) {
      check(db, range(0, 7), gens("a"));
    }
    assertFalse(RemotePrimary.restoring(primary));
    try (Db db = reopenElsewhere()) {
      check(db, range(0, 7), gens("a"));
      assertNull(db.get(0, "default", "absent".getBytes(UTF_8)));
    }
  }

  static String[] gens(String gen) {
    String[] out = new String[BUCKETS];
    Arrays.fill(out, gen);
    return out;
  }
}
