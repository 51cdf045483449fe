package io.cobble.rescale;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.ChildJvm;
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
import io.cobble.vlog.ValueLogFile;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A 2 → 3 rescale whose middle shard takes buckets from two sources, one of which still has files
 * spanning the other's buckets (left from the 3 → 2 rescale before, not cleaned up): the shard
 * cannot combine all files as they are ({@link Mode#COPY}), but it adopts the clean source's files
 * in place and copies only the rows of the other. Checks exact rows, that every file the shard
 * wrote holds only the copied source's buckets, and that every file holding the adopted buckets is
 * a source file read in place; prints the bytes and files adopted and copied, against what copying
 * every row (as every {@code COPY} did before) writes.
 */
class PartialAdoptionTest {
  private static final int BUCKETS = 12;
  private static final int KEYS_PER_BUCKET = 400;
  private static final String FAMILY = "default";

  @TempDir Path tmp;

  private FileStorage volume;

  private static Config config() {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("value-separation.threshold", "200")
        // No compaction merges files behind the test's back: the layout below is exact.
        .set("compaction.l0-file-limit", 64)
        .set("compaction.write-stall-limit", 70)
        .build();
  }

  @Test
  void twoToThreeAdoptsTheCleanSourceAndCopiesOnlyTheOther() throws Exception {
    try (FileStorage v = FileStorage.open(tmp.resolve("volume"), true)) {
      volume = v;
      List<ShardRef> two = twoShards();
      ShardRef b0 = two.get(0);
      ShardRef b1 = two.get(1);
      // 2 -> 3: c4 (4-7) gets 4-5 from b0, whose file spans 6-7 too, and 6-7 from b1.
      BucketRange mid = BucketRange.of(4, 7);
      ShardOpenRequest req = request("c4", mid, List.of(b0, b1), config());
      assertEquals(Mode.COPY, ShardOpener.plan(req).mode());
      try (Db db = ShardOpener.open(req).db()) {
        check(db, mid);
        db.flush();
        long adoptedBytes = 0;
        long copiedBytes = 0;
        int adoptedFiles = 0;
        int copiedFiles = 0;
        for (Tree t : db.versionSet().current().trees()) {
          for (FileMeta f : t.allFiles()) {
            int first = Bytes.getShort(f.smallest(), 0);
            int last = Bytes.getShort(f.largest(), 0);
            if (db.versionSet().isExternal(f.number())) {
              adoptedBytes += f.size();
              adoptedFiles++;
              assertTrue(first >= 6, "an adopted file holds only b1's buckets: " + first);
            } else {
              copiedBytes += f.size();
              copiedFiles++;
              assertTrue(
                  first >= 4 && last <= 5,
                  "a file the shard wrote holds only rows copied from b0: " + first + ".." + last);
            }
          }
        }
        for (ValueLogFile f : db.versionSet().current().vlogFiles().values()) {
          if (db.versionSet().isExternal(f.number())) {
            adoptedBytes += f.size();
            adoptedFiles++;
          } else {
            copiedBytes += f.size();
            copiedFiles++;
          }
        }
        long everyRow = copyEverything(mid);
        System.out.printf(
            "PartialAdoptionTest 2 -> 3, shard 4-7: adopted %d files / %d bytes, copied %d files /"
                + " %d bytes; copying every row writes %d bytes%n",
            adoptedFiles, adoptedBytes, copiedFiles, copiedBytes, everyRow);
        assertTrue(adoptedFiles > 0 && copiedFiles > 0, "both adopted and copied files");
        assertTrue(
            copiedBytes < everyRow,
            "copied " + copiedBytes + " bytes, no fewer than all rows: " + everyRow);
      }
    }
  }

  /**
   * Snapshots of 2 shards rescaled from 3: b0 (0-5) keeps a4's file spanning 4-7, b1 (6-11) cleaned
   * its part of it up.
   */
  private List<ShardRef> twoShards() {
    List<ShardRef> three = new ArrayList<>();
    for (int lo = 0; lo < BUCKETS; lo += 4) {
      BucketRange r = BucketRange.of(lo, lo + 3);
      try (Db db = ShardOpener.open(request("a" + lo, r, List.of(), config())).db();
          SnapshotManager m = SnapshotManager.open(db, volume, "a" + lo)) {
        write(db, r);
        db.compactAll();
        three.add(ShardRef.of("a" + lo, m.snapshot().published().join().id()));
      }
    }
    return List.of(
        rescaled("b0", BucketRange.of(0, 5), three, false),
        rescaled("b1", BucketRange.of(6, 11), three, true));
  }

  /**
   * Kills a child JVM while it copies b0's rows into the middle shard of the 2 → 3 rescale, then
   * opens the shard again from the same snapshots: exact rows, and the sources are intact.
   */
  @Test
  void killedWhileCopyingReopensWithExactRows() throws Exception {
    List<ShardRef> two;
    try (FileStorage v = FileStorage.open(tmp.resolve("volume"), true)) {
      volume = v;
      two = twoShards();
    }
    Process p =
        ChildJvm.withHeap(
                "256m",
                PartialAdoptionTest.class,
                tmp.toString(),
                Long.toString(two.get(0).snapshotId()),
                Long.toString(two.get(1).snapshotId()))
            .redirectErrorStream(true)
            .start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), UTF_8));
      String line = out.readLine();
      // Killed once the copy wrote its second file (or, should the copy outrun the watcher, once
      // it is done: the reopen must hold either way).
      while (line != null && !copied(line, 2) && !line.equals("opened")) {
        line = out.readLine();
      }
      assertTrue(line != null, "child failed before copying");
      System.out.println("PartialAdoptionTest child killed at: " + line);
    } finally {
      p.destroyForcibly();
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child did not exit");
    }
    try (FileStorage v = FileStorage.open(tmp.resolve("volume"), true)) {
      volume = v;
      BucketRange mid = BucketRange.of(4, 7);
      try (Db db = ShardOpener.open(request("c4-again", mid, two, config())).db()) {
        check(db, mid);
      }
      for (ShardRef b : two) {
        BucketRange r = b.shardId().equals("b0") ? BucketRange.of(0, 5) : BucketRange.of(6, 11);
        try (Db db =
            ShardOpener.open(request(b.shardId() + "-again", r, List.of(b), config())).db()) {
          check(db, r);
        }
      }
    }
  }

  /**
   * Child of {@link #killedWhileCopyingReopensWithExactRows}: opens the middle shard with a small
   * memtable, printing the number of files the copy wrote so far whenever it grows.
   */
  public static void main(String[] args) throws Exception {
    Path root = Path.of(args[0]);
    Path work = root.resolve("work-c4");
    Thread watcher =
        new Thread(
            () -> {
              long seen = 0;
              while (!Thread.currentThread().isInterrupted()) {
                long n = ownFiles(work);
                if (n > seen) {
                  seen = n;
                  System.out.println("copying " + n);
                  System.out.flush();
                }
                try {
                  Thread.sleep(1);
                } catch (InterruptedException e) {
                  return;
                }
              }
            });
    watcher.setDaemon(true);
    watcher.start();
    PartialAdoptionTest t = new PartialAdoptionTest();
    t.tmp = root;
    try (FileStorage v = FileStorage.open(root.resolve("volume"), true)) {
      t.volume = v;
      Config small =
          Config.builder().setAll(config().values()).set("memtable.capacity", "16kb").build();
      List<ShardRef> two =
          List.of(
              ShardRef.of("b0", Long.parseLong(args[1])),
              ShardRef.of("b1", Long.parseLong(args[2])));
      try (Db db = ShardOpener.open(t.request("c4", BucketRange.of(4, 7), two, small)).db()) {
        System.out.println("opened");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
      }
    }
  }

  private static boolean copied(String line, int files) {
    return line.startsWith("copying ") && Long.parseLong(line.substring(8)) >= files;
  }

  private static long ownFiles(Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(f -> f.toString().endsWith(".sst")).count();
    } catch (IOException e) {
      return 0;
    }
  }

  /**
   * Opens {@code shardId} from the 3-shard snapshots; {@code clean}: rewrites the files holding
   * buckets it does not own before its snapshot.
   */
  private ShardRef rescaled(String shardId, BucketRange r, List<ShardRef> from, boolean clean) {
    try (Db db = ShardOpener.open(request(shardId, r, from, config())).db();
        SnapshotManager m = SnapshotManager.open(db, volume, shardId)) {
      check(db, r);
      if (clean) {
        db.cleanupForeignBuckets();
      }
      return ShardRef.of(shardId, m.snapshot().published().join().id());
    }
  }

  /** The bytes a shard writes when every row of {@code r} is copied into it. */
  private long copyEverything(BucketRange r) {
    try (Db db =
        ShardOpener.open(request("all", BucketRange.of(0, BUCKETS - 1), List.of(), config()))
            .db()) {
      write(db, r);
      db.flush();
      long n = 0;
      for (Tree t : db.versionSet().current().trees()) {
        for (FileMeta f : t.allFiles()) {
          n += f.size();
        }
      }
      for (ValueLogFile f : db.versionSet().current().vlogFiles().values()) {
        n += f.size();
      }
      return n;
    }
  }

  private ShardOpenRequest request(
      String shardId, BucketRange range, List<ShardRef> sources, Config config) {
    return ShardOpenRequest.builder(volume, tmp.resolve("work-" + shardId), shardId, config)
        .range(range)
        .sources(sources)
        .build();
  }

  private static byte[] key(int k) {
    return String.format("k%05d", k).getBytes(UTF_8);
  }

  private static byte[] value(int bucket, int k) {
    String v = "v-" + bucket + "-" + k + "-";
    return (k % 7 == 0 ? v.repeat(30) : v.repeat(3)).getBytes(UTF_8);
  }

  private static void write(Db db, BucketRange r) {
    for (int b = r.lo(); b <= r.hi(); b++) {
      for (int k = 0; k < KEYS_PER_BUCKET; k++) {
        db.put(b, FAMILY, key(k), 0, value(b, k));
      }
    }
  }

  /** Every bucket of {@code r} holds exactly its rows. */
  private static void check(Db db, BucketRange r) {
    for (int b = r.lo(); b <= r.hi(); b++) {
      int k = 0;
      try (ScanCursor rows = db.scan(b, FAMILY, null, null, ScanOptions.DEFAULT)) {
        while (rows.hasNext()) {
          Row row = rows.next();
          assertArrayEquals(key(k), row.key(), "bucket " + b + " row " + k);
          assertArrayEquals(value(b, k), row.column(0), "bucket " + b + " key " + k);
          k++;
        }
      }
      assertEquals(KEYS_PER_BUCKET, k, "rows of bucket " + b);
    }
  }
}
