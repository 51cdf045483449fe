package io.cobble.snapshot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.reader.ReadOnlyDb;
import io.cobble.rescale.Rescale;
import io.cobble.storage.Storage;
import io.cobble.storage.file.FileStorage;
import io.cobble.storage.s3.S3Volumes;
import io.cobble.testing.S3ProxyServer;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import io.cobble.version.Version;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Random operations against a sorted-map model, including snapshot, restore (latest or older),
 * shrink, expand into a new shard, expand the live shard by buckets cut from any snapshot (its own
 * older ones too), reopen and read-only opens of published snapshots; on a local snapshot volume
 * and on S3 (S3Proxy), files used in place on both.
 */
class SnapshotModelTest {
  private static final int BUCKETS = 8;
  private static final int KEYS = 300;

  @TempDir Path tmp;

  private Random random;
  private Storage volume;
  private Db db;
  private SnapshotManager snaps;
  private String shard;
  private int dirs;
  private int shards;
  // The live Db's state and the state of every published snapshot, keyed "bucket/key".
  private TreeMap<String, String> model;
  private final Map<String, TreeMap<String, String>> published = new HashMap<>();

  static Config config(String ranges) {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("bucket-ranges", ranges)
        .set("memtable.capacity", "32kb")
        .set("sst.target-file-size", "16kb")
        .set("compaction.level-base-size", "32kb")
        .set("value-separation.threshold", "100")
        .set("snapshot.retention", 4)
        .build();
  }

  @Test
  void localVolume() throws Exception {
    try (Storage v = FileStorage.open(tmp.resolve("volume"), true)) {
      run(v, 1, 1500, false);
    }
  }

  /** With live expansions and reopens mixed in. */
  @Test
  void localVolumeWithLiveExpansionAndReopen() throws Exception {
    try (Storage v = FileStorage.open(tmp.resolve("volume"), true)) {
      run(v, 1, 1500, true);
    }
  }

  @Test
  void s3Volume() throws Exception {
    try (S3ProxyServer server = S3ProxyServer.start(tmp.resolve("s3"), "snapshots")) {
      try (Storage v = S3Volumes.open(server, "snapshots/model")) {
        // Fewer steps: every snapshot and restore goes over HTTP.
        run(v, 2, 300, true);
      }
    }
  }

  private void run(Storage v, long seed, int steps, boolean live) throws Exception {
    random = new Random(seed);
    volume = v;
    model = new TreeMap<>();
    openShard(Db.open(nextDir(), config("all")));
    try {
      for (int step = 0; step < steps; step++) {
        int op = random.nextInt(100);
        if (live) {
          checkValueLogsListed(step);
        } else if (op >= 95 && op < 98) {
          op = op < 96 ? 94 : 99;
        }
        if (op < 45) {
          put();
        } else if (op < 55) {
          delete();
        } else if (op < 70) {
          get();
        } else if (op < 75) {
          scan();
        } else if (op < 78) {
          db.flush();
        } else if (op < 80) {
          db.compactAll();
        } else if (op < 88) {
          snapshot();
        } else if (op < 92) {
          restore();
        } else if (op < 94) {
          shrink();
        } else if (op < 95) {
          expand();
        } else if (op < 97) {
          expandLive();
        } else if (op < 98) {
          reopen();
        } else {
          readOnly();
        }
      }
      verifyAll(db, model);
    } finally {
      snaps.close();
      db.close();
    }
  }

  /** Every value log a table points into is in the version (so snapshots and reopen keep it). */
  private void checkValueLogsListed(int step) {
    Version v = db.versionSet().acquire();
    try {
      for (Tree t : v.trees()) {
        for (FileMeta f : t.allFiles()) {
          for (long n : f.properties().vlogRefs().keySet()) {
            assertTrue(
                v.vlogFiles().containsKey(n),
                "step " + step + ": table " + f + " points into value log " + n + " not listed");
          }
        }
      }
    } finally {
      v.unref();
    }
  }

  private Path nextDir() {
    return tmp.resolve("db-" + dirs++);
  }

  private void openShard(Db opened) {
    db = opened;
    shard = "shard-" + shards++;
    snaps = SnapshotManager.open(db, volume, shard);
  }

  private int ownedBucket() {
    int[] r = db.ownedBucketRanges();
    int pair = random.nextInt(r.length / 2) * 2;
    return r[pair] + random.nextInt(r[pair + 1] - r[pair] + 1);
  }

  private static String key(int k) {
    return String.format("k%04d", k);
  }

  private void put() {
    int b = ownedBucket();
    String k = key(random.nextInt(KEYS));
    String value = "v" + random.nextInt(1_000_000);
    if (random.nextInt(5) == 0) {
      value = value.repeat(20); // separated into a value log
    }
    db.put(b, "default", k.getBytes(UTF_8), 0, value.getBytes(UTF_8));
    model.put(b + "/" + k, value);
  }

  private void delete() {
    int b = ownedBucket();
    String k = key(random.nextInt(KEYS));
    db.deleteRow(b, "default", k.getBytes(UTF_8));
    model.remove(b + "/" + k);
  }

  private void get() {
    int b = ownedBucket();
    String k = key(random.nextInt(KEYS));
    byte[][] row = db.get(b, "default", k.getBytes(UTF_8));
    assertEquals(model.get(b + "/" + k), row == null ? null : new String(row[0], UTF_8), b + k);
  }

  private void scan() {
    int b = ownedBucket();
    List<String> got = new ArrayList<>();
    try (ScanCursor c = db.scan(b, "default", null, null, ScanOptions.defaults())) {
      while (c.hasNext()) {
        Row r = c.next();
        got.add(b + "/" + new String(r.key(), UTF_8) + "=" + new String(r.column(0), UTF_8));
      }
    }
    List<String> want = new ArrayList<>();
    model.subMap(b + "/", b + "0").forEach((k, v) -> want.add(k + "=" + v));
    assertEquals(want, got, "scan of bucket " + b);
  }

  private void snapshot() {
    ShardSnapshot s = snaps.snapshot().published().join();
    published.put(shard + "/" + s.id(), new TreeMap<>(model));
  }

  private void restore() throws Exception {
    List<Long> ids = snaps.published();
    if (ids.isEmpty()) {
      return;
    }
    long id = ids.get(random.nextInt(ids.size()));
    snaps.close();
    db.close();
    Path dir = db.directory();
    db = SnapshotRestore.resume(dir, volume, shard, id, config("all"));
    snaps = SnapshotManager.open(db, volume, shard);
    model = new TreeMap<>(published.get(shard + "/" + id));
  }

  private void shrink() {
    int[] r = db.ownedBucketRanges();
    int pair = random.nextInt(r.length / 2) * 2;
    if (r.length == 2 && r[0] == r[1]) {
      return;
    }
    int lo = r[pair] + (r[pair] < r[pair + 1] ? random.nextInt(2) : 0);
    int hi = Math.max(lo, r[pair + 1] - random.nextInt(2));
    Rescale.shrinkBuckets(db, List.of(BucketRange.of(lo, hi)));
    model.keySet().removeIf(k -> !owns(k, lo, hi));
  }

  private void expand() {
    List<Long> ids = snaps.published();
    if (ids.isEmpty()) {
      return;
    }
    long id = ids.get(ids.size() - 1);
    ShardSnapshot s = snaps.store().require(shard, id);
    BucketRange from = s.ranges().get(0);
    int lo = from.lo() + random.nextInt(from.hi() - from.lo() + 1);
    BucketRange cut = BucketRange.of(lo, from.hi());
    String target = "shard-" + shards;
    Db next =
        Rescale.expandBuckets(
            nextDir(),
            volume,
            List.of(ShardRef.of(shard, id)),
            List.of(cut),
            target,
            config("all"));
    TreeMap<String, String> m = new TreeMap<>(published.get(shard + "/" + id));
    m.keySet().removeIf(k -> !owns(k, cut.lo(), cut.hi()));
    verifyAll(next, m);
    snaps.close();
    db.close();
    openShard(next);
    model = m;
  }

  /**
   * Grows the live shard by buckets it does not own, cut from any intact snapshot on the volume:
   * often one of its own from before it shrank away those buckets, whose rows its files still hold
   * with other values (they must not show), or a sibling's.
   */
  private void expandLive() {
    List<String> candidates = new ArrayList<>(new TreeMap<>(published).keySet());
    Collections.shuffle(candidates, random);
    for (String ref : candidates) {
      String source = ref.substring(0, ref.lastIndexOf('/'));
      long id = Long.parseLong(ref.substring(ref.lastIndexOf('/') + 1));
      Optional<ShardSnapshot> s = snaps.store().read(source, id);
      if (s.isEmpty()) {
        continue;
      }
      List<Integer> free = new ArrayList<>();
      for (BucketRange r : s.get().ranges()) {
        for (int b = r.lo(); b <= r.hi(); b++) {
          if (!ownsBucket(b)) {
            free.add(b);
          }
        }
      }
      if (free.isEmpty()) {
        continue;
      }
      int lo = free.get(random.nextInt(free.size()));
      int hi = lo;
      while (free.contains(hi + 1) && random.nextInt(3) > 0) {
        hi++;
      }
      BucketRange cut = BucketRange.of(lo, hi);
      Rescale.expandBuckets(snaps, List.of(ShardRef.of(source, id)), List.of(cut));
      published
          .get(ref)
          .forEach(
              (k, v) -> {
                if (owns(k, cut.lo(), cut.hi())) {
                  model.put(k, v);
                }
              });
      verifyAll(db, model);
      assertLevelsDisjoint(db);
      return;
    }
  }

  /** Below L0 the files of a level never overlap, whatever expansion placed there. */
  private static void assertLevelsDisjoint(Db d) {
    for (Tree t : d.versionSet().current().trees()) {
      for (int level = 1; level < t.levelCount(); level++) {
        List<FileMeta> files = t.level(level);
        for (int i = 1; i < files.size(); i++) {
          assertTrue(
              Bytes.compare(files.get(i - 1).largest(), files.get(i).smallest()) < 0,
              "level " + level + " overlaps: " + files);
        }
      }
    }
  }

  private boolean ownsBucket(int b) {
    int[] r = db.ownedBucketRanges();
    for (int i = 0; i < r.length; i += 2) {
      if (b >= r[i] && b <= r[i + 1]) {
        return true;
      }
    }
    return false;
  }

  /** Closes and reopens the live shard: what it adopted is durable without a snapshot. */
  private void reopen() {
    snaps.close();
    Path dir = db.directory();
    Config config = db.config();
    db.close();
    // The opening config: a restored shard's ranges come from it, not from a RANGES file.
    db = Db.open(dir, config, volume);
    snaps = SnapshotManager.open(db, volume, shard);
    verifyAll(db, model);
  }

  private void readOnly() {
    List<Long> ids = snaps.published();
    if (ids.isEmpty()) {
      return;
    }
    long id = ids.get(random.nextInt(ids.size()));
    try (ReadOnlyDb ro = ReadOnlyDb.open(volume, shard, id, config("all"))) {
      TreeMap<String, String> m = published.get(shard + "/" + id);
      for (int i = 0; i < 40; i++) {
        BucketRange r = ro.ranges().get(random.nextInt(ro.ranges().size()));
        int b = r.lo() + random.nextInt(r.hi() - r.lo() + 1);
        String k = key(random.nextInt(KEYS));
        byte[][] row = ro.get(b, "default", k.getBytes(UTF_8));
        assertEquals(m.get(b + "/" + k), row == null ? null : new String(row[0], UTF_8));
      }
    }
  }

  private static boolean owns(String modelKey, int lo, int hi) {
    int b = Integer.parseInt(modelKey.substring(0, modelKey.indexOf('/')));
    return b >= lo && b <= hi;
  }

  private static void verifyAll(Db d, TreeMap<String, String> m) {
    int[] r = d.ownedBucketRanges();
    int seen = 0;
    for (int i = 0; i < r.length; i += 2) {
      for (int b = r[i]; b <= r[i + 1]; b++) {
        for (int k = 0; k < KEYS; k++) {
          byte[][] row = d.get(b, "default", key(k).getBytes(UTF_8));
          String want = m.get(b + "/" + key(k));
          if (want == null) {
            assertNull(row, b + "/" + key(k));
          } else {
            assertEquals(want, new String(row[0], UTF_8), b + "/" + key(k));
            seen++;
          }
        }
      }
    }
    assertTrue(seen > 0 || m.isEmpty());
  }
}
