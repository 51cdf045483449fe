package io.cobble.rescale;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.file.FileStorage;
import io.cobble.storage.s3.S3Volumes;
import io.cobble.testing.S3ProxyServer;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RescaleTest {
  static final int BUCKETS = 8;
  static final int KEYS = 3000;

  @TempDir Path tmp;

  static Config config(int retention) {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "16kb")
        .set("compaction.level-base-size", "64kb")
        .set("value-separation.threshold", "200")
        .set("snapshot.retention", retention)
        .build();
  }

  static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  static byte[] value(int i, int gen) {
    String v = "g" + gen + "-" + i;
    return (i % 11 == 0 ? v.repeat(30) : v).getBytes(UTF_8);
  }

  static void write(Db db, int gen) {
    for (int i = 0; i < KEYS; i++) {
      if (owns(db, i % BUCKETS)) {
        db.put(i % BUCKETS, "default", key(i), 0, value(i, gen));
      }
    }
  }

  static void check(Db db, int gen) {
    int checked = 0;
    for (int i = 0; i < KEYS; i++) {
      if (owns(db, i % BUCKETS)) {
        byte[][] row = db.get(i % BUCKETS, "default", key(i));
        assertArrayEquals(value(i, gen), row == null ? null : row[0], "key " + i);
        checked++;
      }
    }
    assertTrue(checked > 0);
  }

  static boolean owns(Db db, int bucket) {
    int[] r = db.ownedBucketRanges();
    for (int i = 0; i < r.length; i += 2) {
      if (bucket >= r[i] && bucket <= r[i + 1]) {
        return true;
      }
    }
    return false;
  }

  static List<BucketRange> ranges(int lo, int hi) {
    return List.of(BucketRange.of(lo, hi));
  }

  @Test
  void shrinkFiltersReadsSurvivesReopenAndCompactionDropsGivenUpBuckets() {
    Path dir = tmp.resolve("db");
    try (Db db = Db.open(dir, config(0))) {
      write(db, 1);
      db.compactAll();
      Rescale.shrinkBuckets(db, ranges(0, 3));
      check(db, 1);
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> db.get(5, "default", key(5)));
      assertTrue(e.getMessage().contains("owned ranges are 0-3"), e.getMessage());
      assertThrows(IllegalArgumentException.class, () -> Rescale.shrinkBuckets(db, ranges(2, 6)));
    }
    try (Db db = Db.open(dir, config(0))) {
      assertArrayEquals(new int[] {0, 3}, db.ownedBucketRanges());
      check(db, 1);
      write(db, 2);
      db.compactAll();
      check(db, 2);
      for (Tree t : db.versionSet().current().trees()) {
        for (FileMeta f : t.allFiles()) {
          assertTrue(Bytes.getShort(f.largest(), 0) <= 3, "compaction dropped buckets 4-7: " + f);
        }
      }
    }
  }

  @Test
  void oneShardToThreeToTwoOnALocalVolume() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true)) {
      oneShardToThreeToTwoWithoutRewritingAndLeasesKeepSourcesAlive(volume);
    }
  }

  /** The same on S3 (S3Proxy): every target reads its sources' files in place. */
  @Test
  void oneShardToThreeToTwoOnS3() throws Exception {
    try (S3ProxyServer server = S3ProxyServer.start(tmp.resolve("s3"), "vol");
        Storage volume = S3Volumes.open(server, "vol/snapshots")) {
      oneShardToThreeToTwoWithoutRewritingAndLeasesKeepSourcesAlive(volume);
    }
  }

  private void oneShardToThreeToTwoWithoutRewritingAndLeasesKeepSourcesAlive(Storage volume)
      throws Exception {
    SnapshotStore store = new SnapshotStore(volume);
    long source;
    Db s0 = Db.open(tmp.resolve("s0"), config(1));
    SnapshotManager m0 = SnapshotManager.open(s0, volume, "s0");
    write(s0, 1);
    s0.compactAll();
    // One small L0 file that spans buckets 2 and 3, so a cut at 2|3 leaves a file holding both.
    for (int i = 2; i < 200; i += BUCKETS) {
      s0.put(2, "default", key(i), 0, value(i, 1));
      s0.put(3, "default", key(i + 1), 0, value(i + 1, 1));
    }
    source = m0.snapshot().published().join().id();
    long sourceBytes = store.require("s0", source).dataBytes();

    // 1 -> 3: every target uses s0's files in place.
    List<BucketRange> three =
        List.of(BucketRange.of(0, 2), BucketRange.of(3, 5), BucketRange.of(6, 7));
    List<Db> mid = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Db t =
          Rescale.expandBuckets(
              tmp.resolve("t" + i),
              volume,
              List.of(ShardRef.of("s0", source)),
              List.of(three.get(i)),
              "t" + i,
              config(1));
      mid.add(t);
      check(t, 1);
      assertEquals(1, store.leasePaths("t" + i).size());
      assertEquals(0, t.metrics().flushes(), "nothing was rewritten up front");
    }
    // Combining a shard whose files still hold given-up buckets is refused clearly: d is cut
    // from s0 at 2|3 and snapshotted with its background cleanup off.
    try (Db d =
            Rescale.expandBuckets(
                tmp.resolve("d"),
                volume,
                List.of(ShardRef.of("s0", source)),
                ranges(0, 2),
                "d",
                config(0).toBuilder().set("compaction.foreign-bucket-cleanup", false).build());
        SnapshotManager md = SnapshotManager.open(d, volume, "d")) {
      long dirty = md.snapshot().published().join().id();
      long t1Dirty;
      try (SnapshotManager m1 = SnapshotManager.open(mid.get(1), volume, "t1")) {
        t1Dirty = m1.snapshot().published().join().id();
      }
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  Rescale.expandBuckets(
                      tmp.resolve("bad"),
                      volume,
                      List.of(ShardRef.of("d", dirty), ShardRef.of("t1", t1Dirty)),
                      ranges(0, 5),
                      "bad",
                      config(0)));
      assertTrue(e.getMessage().contains("compact shard d"), e.getMessage());
    }
    // The source moves on and its retention drops the snapshot the targets read from; the
    // export leases keep those files.
    write(s0, 9);
    s0.compactAll();
    m0.snapshot().published().join();
    assertEquals(List.of(source + 1), m0.published());
    m0.close();
    s0.close();
    for (Db t : mid) {
      check(t, 1);
    }
    // Targets write, compact (dropping buckets they do not own) and snapshot; the first
    // snapshot takes ownership and ends the lease.
    List<Long> midSnapshots = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Db t = mid.get(i);
      write(t, 2);
      try (SnapshotManager m = SnapshotManager.open(t, volume, "t" + i)) {
        m.snapshot().published().join();
        assertTrue(store.leasePaths("t" + i).isEmpty());
        t.compactAll();
        midSnapshots.add(m.snapshot().published().join().id());
      }
      check(t, 2);
      t.close();
    }
    // 3 -> 2, each target combining two sources.
    List<BucketRange> two = List.of(BucketRange.of(0, 3), BucketRange.of(4, 7));
    int[][] sourcesOf = {{0, 1}, {1, 2}};
    for (int i = 0; i < 2; i++) {
      List<ShardRef> refs = new ArrayList<>();
      for (int s : sourcesOf[i]) {
        refs.add(ShardRef.of("t" + s, midSnapshots.get(s)));
      }
      try (Db u =
          Rescale.expandBuckets(
              tmp.resolve("u" + i), volume, refs, List.of(two.get(i)), "u" + i, config(0))) {
        check(u, 2);
        write(u, 3);
        u.compactAll();
        check(u, 3);
      }
    }
    assertTrue(sourceBytes > 0);
  }
}
