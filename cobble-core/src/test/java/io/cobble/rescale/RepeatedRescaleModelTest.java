package io.cobble.rescale;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.Row;
import io.cobble.ScanCursor;
import io.cobble.ScanOptions;
import io.cobble.rescale.ShardOpener.Mode;
import io.cobble.snapshot.BucketRange;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.storage.file.FileStorage;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A keyed state rescaled several times, 3 → 4 → 2 → 3 shards, every shard opened from the manifests
 * of the previous layout, with random puts, overwrites and deletes between the steps; a model holds
 * the expected rows. Checks exact contents after each step, that the cleanup of given-up buckets
 * (manual, then the background one) leaves no live file spanning a bucket its shard does not own
 * and shrinks the live data, that the background cleanup rewrites a file read in place from a
 * source snapshot only once a snapshot of the shard itself names it, and that the rescale after a
 * cleanup combines files as they are ({@link Mode#EXPAND}) where the same rescale before it had to
 * copy rows. Replay a seed with {@code -Dcobble.rescale.seed=N}.
 */
class RepeatedRescaleModelTest {
  private static final int BUCKETS = 12;
  private static final int KEYS_PER_BUCKET = 300;
  private static final String FAMILY = "default";

  @TempDir Path tmp;

  private final long seed = Long.getLong("cobble.rescale.seed", 20261202L);
  private final Random rnd = new Random(seed);
  private final List<TreeMap<String, byte[]>> model = new ArrayList<>();
  private FileStorage volume;
  private int generation;

  private static Config config(boolean backgroundCleanup) {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("memtable.capacity", "32kb")
        .set("sst.target-file-size", "8kb")
        .set("compaction.level-base-size", "32kb")
        .set("value-separation.threshold", "200")
        .set("compaction.foreign-bucket-cleanup", backgroundCleanup)
        // Keeps the snapshot taken before a cleanup next to the one taken after it.
        .set("snapshot.retention", 3)
        .build();
  }

  private static List<BucketRange> layout(int... bounds) {
    List<BucketRange> out = new ArrayList<>();
    for (int i = 0; i < bounds.length; i += 2) {
      out.add(BucketRange.of(bounds[i], bounds[i + 1]));
    }
    return out;
  }

  @Test
  void threeToFourToTwoToThreeKeepsExactRowsAndAdoptsCleanedFiles() throws Exception {
    System.out.println("RepeatedRescaleModelTest seed=" + seed);
    for (int b = 0; b < BUCKETS; b++) {
      model.add(new TreeMap<>());
    }
    try (FileStorage v = FileStorage.open(tmp.resolve("volume"), true)) {
      volume = v;
      run();
    } catch (AssertionError | RuntimeException e) {
      throw new AssertionError("failed with -Dcobble.rescale.seed=" + seed + ": " + e, e);
    }
  }

  private void run() {
    // 3 shards, written from scratch. Each snapshot's flush leaves an L0 file spanning all of its
    // shard's buckets, so every later cut through a shard leaves files holding given-up buckets.
    List<BucketRange> three = layout(0, 3, 4, 7, 8, 11);
    List<ShardRef> refs = new ArrayList<>();
    for (int i = 0; i < three.size(); i++) {
      Opened o = open("a" + i, three.get(i), List.of(), config(true));
      assertEquals(Mode.NEW, o.mode);
      try (Db db = o.db;
          SnapshotManager m = SnapshotManager.open(db, volume, o.shardId)) {
        writeRandomly(db, three.get(i), 3000);
        db.compactAll();
        touchEveryBucket(db, three.get(i));
        refs.add(ShardRef.of(o.shardId, m.snapshot().published().join().id()));
      }
    }

    // 3 -> 4 with the background cleanup off: the shards start with files of the old layout.
    List<BucketRange> four = layout(0, 2, 3, 5, 6, 8, 9, 11);
    List<ShardRef> dirty = new ArrayList<>();
    List<ShardRef> clean = new ArrayList<>();
    // The rows of each bucket as the snapshots before the cleanup hold them.
    List<TreeMap<String, byte[]>> dirtyModel = new ArrayList<>();
    for (int b = 0; b < BUCKETS; b++) {
      dirtyModel.add(new TreeMap<>(model.get(b)));
    }
    for (int i = 0; i < four.size(); i++) {
      Opened o = open("b" + i, four.get(i), refs, config(false));
      assertTrue(o.mode == Mode.SHRINK || o.mode == Mode.EXPAND, "3 -> 4 plans " + o.mode);
      try (Db db = o.db;
          SnapshotManager m = SnapshotManager.open(db, volume, o.shardId)) {
        check(db, four.get(i), "after 3 -> 4");
        dirty.add(ShardRef.of(o.shardId, m.snapshot().published().join().id()));
        long before = liveBytes(db);
        assertTrue(foreignFiles(db) > 0, "shard b" + i + " starts with files of buckets it lacks");
        db.cleanupForeignBuckets();
        assertEquals(0, foreignFiles(db), "after the manual cleanup of b" + i);
        long after = liveBytes(db);
        assertTrue(
            after < before, "cleanup of b" + i + " freed nothing: " + before + " -> " + after);
        check(db, four.get(i), "after the cleanup of b" + i);
        writeRandomly(db, four.get(i), 1500);
        assertEquals(0, foreignFiles(db), "writes of owned buckets stay clean in b" + i);
        check(db, four.get(i), "after writing b" + i);
        touchEveryBucket(db, four.get(i));
        clean.add(ShardRef.of(o.shardId, m.snapshot().published().join().id()));
      }
    }

    // 4 -> 2: before the cleanup the files cross the new shards' boundaries and rows would have
    // to be copied; after it they are combined as they are.
    List<BucketRange> two = layout(0, 5, 6, 11);
    for (BucketRange r : two) {
      assertEquals(Mode.COPY, plan("p" + r.lo(), r, dirty), "4 -> 2 from snapshots before cleanup");
      // Opened that way it adopts the sources whose files fit and copies the others' rows.
      Opened o = open("p" + r.lo(), r, dirty, config(true));
      try (Db db = o.db) {
        check(db, r, "4 -> 2 from snapshots before cleanup", dirtyModel);
      }
    }
    refs = new ArrayList<>();
    for (int i = 0; i < two.size(); i++) {
      Opened o = open("c" + i, two.get(i), clean, config(true));
      assertEquals(Mode.EXPAND, o.mode, "4 -> 2 after cleanup adopts the files");
      try (Db db = o.db;
          SnapshotManager m = SnapshotManager.open(db, volume, o.shardId)) {
        check(db, two.get(i), "after 4 -> 2");
        writeRandomly(db, two.get(i), 1500);
        db.waitForCompactions();
        assertEquals(0, foreignFiles(db), "background compaction left c" + i + " clean");
        check(db, two.get(i), "after writing c" + i);
        touchEveryBucket(db, two.get(i));
        refs.add(ShardRef.of(o.shardId, m.snapshot().published().join().id()));
      }
    }

    // 2 -> 3: a shard built by a rescale is cut again. The background cleanup leaves the files
    // it reads in place from the sources' snapshots alone until its own snapshot names them, then
    // rewrites them on its own.
    for (int i = 0; i < three.size(); i++) {
      Opened o = open("d" + i, three.get(i), refs, config(true));
      Mode expected = i == 1 ? Mode.EXPAND : Mode.SHRINK;
      assertEquals(expected, o.mode, "2 -> 3 for " + three.get(i));
      try (Db db = o.db;
          SnapshotManager m = SnapshotManager.open(db, volume, o.shardId)) {
        db.waitForCompactions();
        // Whether any is left depends on what else compaction merged by now; those left are held.
        assertEquals(
            foreignFiles(db),
            heldForeignFiles(db),
            "d" + i + ": every file left with given-up buckets is a source file read in place");
        check(db, three.get(i), "after 2 -> 3");
        m.snapshot().published().join();
        db.waitForCompactions();
        assertEquals(0, foreignFiles(db), "background cleanup of d" + i + " after its snapshot");
        check(db, three.get(i), "after the background cleanup of d" + i);
        writeRandomly(db, three.get(i), 1000);
        db.waitForCompactions();
        assertEquals(0, foreignFiles(db), "d" + i + " after writing");
        check(db, three.get(i), "after writing d" + i);
      }
    }
  }

  private static final class Opened {
    final String shardId;
    final Db db;
    final Mode mode;

    Opened(String shardId, Db db, Mode mode) {
      this.shardId = shardId;
      this.db = db;
      this.mode = mode;
    }
  }

  private Opened open(String shardId, BucketRange range, List<ShardRef> sources, Config config) {
    ShardOpener.Opened o = ShardOpener.open(request(shardId, range, sources, config));
    return new Opened(shardId, o.db(), o.plan().mode());
  }

  private Mode plan(String shardId, BucketRange range, List<ShardRef> sources) {
    return ShardOpener.plan(request(shardId, range, sources, config(true))).mode();
  }

  private ShardOpenRequest request(
      String shardId, BucketRange range, List<ShardRef> sources, Config config) {
    return ShardOpenRequest.builder(volume, tmp.resolve("work-" + shardId), shardId, config)
        .range(range)
        .sources(sources)
        .build();
  }

  private static byte[] key(int i) {
    return String.format("k%05d", i).getBytes(UTF_8);
  }

  private byte[] value(int bucket, int k) {
    int length = rnd.nextInt(8) == 0 ? 220 + rnd.nextInt(200) : 10 + rnd.nextInt(60);
    StringBuilder b = new StringBuilder("g" + generation + "-" + bucket + "-" + k + "-");
    while (b.length() < length) {
      b.append((char) ('a' + rnd.nextInt(26)));
    }
    return b.toString().getBytes(UTF_8);
  }

  /** {@code ops} random puts (new keys and overwrites) and row deletes in {@code range}. */
  private void writeRandomly(Db db, BucketRange range, int ops) {
    generation++;
    for (int n = 0; n < ops; n++) {
      int bucket = range.lo() + rnd.nextInt(range.hi() - range.lo() + 1);
      int k = rnd.nextInt(KEYS_PER_BUCKET);
      String key = new String(key(k), UTF_8);
      if (rnd.nextInt(5) == 0) {
        db.deleteRow(bucket, FAMILY, key(k));
        model.get(bucket).remove(key);
      } else {
        byte[] value = value(bucket, k);
        db.put(bucket, FAMILY, key(k), 0, value);
        model.get(bucket).put(key, value);
      }
    }
  }

  /** One put into each bucket of {@code range}, so the next flush spans all of them. */
  private void touchEveryBucket(Db db, BucketRange range) {
    generation++;
    for (int bucket = range.lo(); bucket <= range.hi(); bucket++) {
      int k = rnd.nextInt(KEYS_PER_BUCKET);
      byte[] value = value(bucket, k);
      db.put(bucket, FAMILY, key(k), 0, value);
      model.get(bucket).put(new String(key(k), UTF_8), value);
    }
  }

  /** Every bucket of {@code range} scans exactly as the model says, in key order. */
  private void check(Db db, BucketRange range, String when) {
    check(db, range, when, model);
  }

  /** Every bucket of {@code range} scans exactly as {@code model} says, in key order. */
  private static void check(
      Db db, BucketRange range, String when, List<TreeMap<String, byte[]>> model) {
    assertEquals(
        List.of(range), BucketRange.fromPairs(db.ownedBucketRanges()), when + ": owned ranges");
    for (int bucket = range.lo(); bucket <= range.hi(); bucket++) {
      TreeMap<String, byte[]> expected = model.get(bucket);
      List<Map.Entry<String, byte[]>> want = new ArrayList<>(expected.entrySet());
      int i = 0;
      try (ScanCursor rows = db.scan(bucket, FAMILY, null, null, ScanOptions.DEFAULT)) {
        while (rows.hasNext()) {
          Row row = rows.next();
          String key = new String(row.key(), UTF_8);
          assertTrue(i < want.size(), when + ": bucket " + bucket + " has extra row " + key);
          assertEquals(want.get(i).getKey(), key, when + ": bucket " + bucket + " row " + i);
          assertArrayEquals(
              want.get(i).getValue(), row.column(0), when + ": bucket " + bucket + " key " + key);
          i++;
        }
      }
      assertEquals(want.size(), i, when + ": rows of bucket " + bucket);
      for (Map.Entry<String, byte[]> e : expected.entrySet()) {
        byte[][] got = db.get(bucket, FAMILY, e.getKey().getBytes(UTF_8));
        assertFalse(got == null, when + ": get of " + e.getKey() + " in bucket " + bucket);
        assertArrayEquals(e.getValue(), got[0], when + ": get of " + e.getKey());
      }
    }
  }

  /** Live table files whose bucket span reaches outside the one owned range. */
  private static int foreignFiles(Db db) {
    int[] owned = db.ownedBucketRanges();
    assertEquals(2, owned.length, "one owned range");
    int foreign = 0;
    for (Tree t : db.versionSet().current().trees()) {
      for (FileMeta f : t.allFiles()) {
        int first = Bytes.getShort(f.smallest(), 0);
        int last = Bytes.getShort(f.largest(), 0);
        if (first < owned[0] || last > owned[1]) {
          foreign++;
        }
      }
    }
    return foreign;
  }

  /** Live files spanning a bucket the shard lacks that it reads in place from a source snapshot. */
  private static int heldForeignFiles(Db db) {
    int[] owned = db.ownedBucketRanges();
    int held = 0;
    for (Tree t : db.versionSet().current().trees()) {
      for (FileMeta f : t.allFiles()) {
        int first = Bytes.getShort(f.smallest(), 0);
        int last = Bytes.getShort(f.largest(), 0);
        if ((first < owned[0] || last > owned[1]) && db.versionSet().isExternal(f.number())) {
          held++;
        }
      }
    }
    return held;
  }

  private static long liveBytes(Db db) {
    long n = 0;
    for (Tree t : db.versionSet().current().trees()) {
      for (FileMeta f : t.allFiles()) {
        n += f.size();
      }
    }
    return n;
  }
}
