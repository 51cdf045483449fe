package io.cobble.rescale;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.ChildJvm;
import io.cobble.Config;
import io.cobble.Db;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.version.Tree;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a child JVM while it rewrites the files of a shrunk shard that still hold given-up buckets,
 * then reopens: every owned row reads back exactly, none of the given-up ones resurfaces, and a
 * finished cleanup leaves no file spanning a bucket the shard does not own. Replay a seed with
 * {@code -Dcobble.cleanup-crash.seed=N}.
 */
class CleanupCrashTest {
  private static final int BUCKETS = 8;
  private static final int KEYS = 20000;

  @TempDir Path dir;

  private static Config config() {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "8kb")
        .set("compaction.level-base-size", "64kb")
        .set("value-separation.threshold", "200")
        // Only the child's manual cleanup rewrites the files, so each round has some to rewrite.
        .set("compaction.foreign-bucket-cleanup", false)
        .build();
  }

  static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  static byte[] value(int i) {
    String v = "v-" + i + "-";
    return (i % 13 == 0 ? v.repeat(40) : v.repeat(4)).getBytes(UTF_8);
  }

  /**
   * Child process: opens the shrunk shard and cleans it up in a second thread, printing the files
   * still to clean up whenever a rewrite was installed, so the parent can kill it part way.
   */
  public static void main(String[] args) throws Exception {
    try (Db db = Db.open(Path.of(args[0]), config())) {
      int left = foreignFiles(db);
      Thread cleaner = new Thread(db::cleanupForeignBuckets);
      System.out.println("cleaning " + left);
      System.out.flush();
      cleaner.start();
      while (cleaner.isAlive()) {
        int now = foreignFiles(db);
        if (now != left) {
          left = now;
          System.out.println("left " + left);
          System.out.flush();
        }
      }
      System.out.println("cleaned");
      System.out.flush();
    }
  }

  @Test
  void killedDuringCleanupReopensWithExactRows() throws Exception {
    long seed = Long.getLong("cobble.cleanup-crash.seed", 5L);
    System.out.println("CleanupCrashTest seed=" + seed);
    Random rnd = new Random(seed);
    try (Db db = Db.open(dir, config())) {
      for (int i = 0; i < KEYS; i++) {
        db.put(i % BUCKETS, "default", key(i), 0, value(i));
      }
      db.compactAll();
      // Buckets 0-1 and 5-7 stay: every file crossing 2-4 must be rewritten.
      db.shrinkBuckets(new int[] {0, 1, 5, 7});
      System.out.println("files to clean up: " + foreignFiles(db));
    }
    boolean finished = false;
    for (int round = 0; round < 3 && !finished; round++) {
      Process p =
          ChildJvm.withHeap("256m", CleanupCrashTest.class, dir.toString())
              .redirectErrorStream(true)
              .start();
      try {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), UTF_8));
        // Killed after a random number of installed rewrites (or once it is done).
        int rewrites = 1 + rnd.nextInt(4);
        String line = out.readLine();
        while (line != null && !line.equals("cleaned") && rewrites > 0) {
          rewrites -= line.startsWith("left ") ? 1 : 0;
          line = out.readLine();
        }
        assertTrue(line != null, "child failed (seed " + seed + ")");
      } finally {
        p.destroyForcibly();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child did not exit");
      }
      try (Db db = Db.open(dir, config())) {
        check(db, "after the kill in round " + round + " (seed " + seed + ")");
        int left = foreignFiles(db);
        System.out.println("round " + round + ": " + left + " files still to clean up");
        finished = left == 0;
      }
    }
    try (Db db = Db.open(dir, config())) {
      db.cleanupForeignBuckets();
      assertEquals(0, foreignFiles(db), "a finished cleanup leaves no file crossing buckets 2-4");
      check(db, "after the cleanup (seed " + seed + ")");
    }
  }

  private static void check(Db db, String when) {
    for (int i = 0; i < KEYS; i++) {
      int bucket = i % BUCKETS;
      if (bucket >= 2 && bucket <= 4) {
        continue;
      }
      byte[][] row = db.get(bucket, "default", key(i));
      assertArrayEquals(value(i), row == null ? null : row[0], when + ": key " + i);
    }
    // Keys written only into given-up buckets are in no owned bucket.
    for (int j = 2; j < 400; j += BUCKETS) {
      for (int bucket : new int[] {0, 1, 5, 6, 7}) {
        assertNull(db.get(bucket, "default", key(j)), when + ": key " + j + " in " + bucket);
      }
    }
  }

  private static int foreignFiles(Db db) {
    int foreign = 0;
    for (Tree t : db.versionSet().current().trees()) {
      for (FileMeta f : t.allFiles()) {
        int first = Bytes.getShort(f.smallest(), 0);
        int last = Bytes.getShort(f.largest(), 0);
        boolean inOne = (first >= 0 && last <= 1) || (first >= 5 && last <= 7);
        foreign += inOne ? 0 : 1;
      }
    }
    return foreign;
  }
}
