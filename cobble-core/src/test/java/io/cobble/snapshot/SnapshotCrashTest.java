package io.cobble.snapshot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.ChildJvm;
import io.cobble.Config;
import io.cobble.Db;
import io.cobble.LocalFiles;
import io.cobble.storage.file.FileStorage;
import io.cobble.util.Bytes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a child JVM that writes, flushes, compacts and snapshots in rounds, at random moments
 * (SIGKILL), then checks that the newest published snapshot restores exactly one round's data,
 * every file it lists reads back, and orphaned uploads and local files are cleaned up on reopen.
 *
 * <p>Nothing here waits for time to pass before judging: the reopened writer's directory is
 * compared with its live files right after {@link Db#waitForCompactions()} returns. To check that
 * this holds on a starved machine, load every core with busy loops and run 100 iterations:
 *
 * <pre>{@code
 * for i in $(seq $(nproc)); do (while :; do :; done) & done
 * mvn -o -pl cobble-core test -Dtest=SnapshotCrashTest -Dcobble.snapshot-crash.iterations=100
 * kill $(jobs -p)
 * }</pre>
 */
class SnapshotCrashTest {
  private static final int KEYS = 1200;
  private static final byte[] ROUND_KEY = "~round".getBytes(UTF_8);
  private static final String SHARD = "crash";

  @TempDir Path tmp;

  static Config config() {
    return Config.builder()
        .set("total-buckets", SnapshotTest.BUCKETS)
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "32kb")
        .set("compaction.level-base-size", "64kb")
        .set("value-separation.threshold", "200")
        .set("snapshot.retention", 3)
        .build();
  }

  /** The value of key {@code i} after round {@code r}; null means deleted. */
  static byte[] expected(int i, long r) {
    if ((i + r) % 5 == 0) {
      return null;
    }
    String v = "r" + r + "-" + i;
    return (i % 9 == 0 ? v.repeat(30) : v).getBytes(UTF_8);
  }

  static byte[] key(int i) {
    return String.format("k%05d", i).getBytes(UTF_8);
  }

  /** Child: rounds of writes, each ending in a snapshot; runs until killed. */
  public static void main(String[] args) throws Exception {
    Path work = Path.of(args[0]);
    Random random = new Random(Long.parseLong(args[2]));
    try (FileStorage volume = FileStorage.open(Path.of(args[1]), true);
        Db db = Db.open(work, config());
        SnapshotManager snaps = SnapshotManager.open(db, volume, SHARD)) {
      byte[][] last = db.get(0, "default", ROUND_KEY);
      long round = last == null ? 1 : Bytes.getLong(last[0], 0) + 1;
      while (true) {
        for (int i = 0; i < KEYS; i++) {
          byte[] v = expected(i, round);
          if (v == null) {
            db.deleteRow(i % SnapshotTest.BUCKETS, "default", key(i));
          } else {
            db.put(i % SnapshotTest.BUCKETS, "default", key(i), 0, v);
          }
        }
        byte[] r = new byte[8];
        Bytes.putLong(r, 0, round);
        db.put(0, "default", ROUND_KEY, 0, r);
        if (random.nextInt(3) == 0) {
          db.compactAll();
        }
        PendingSnapshot p = snaps.snapshot();
        if (random.nextBoolean()) {
          p.published().join();
        }
        round++;
      }
    }
  }

  @Test
  void latestPublishedSnapshotSurvivesKillsAtRandomMoments() throws Exception {
    int iterations = Integer.getInteger("cobble.snapshot-crash.iterations", 10);
    Path work = tmp.resolve("work");
    Path volumeDir = tmp.resolve("volume");
    Files.createDirectories(volumeDir);
    Random random = new Random(42);
    long lastRound = 0;
    for (int it = 0; it < iterations; it++) {
      Process child =
          ChildJvm.withHeap(
                  "256m",
                  SnapshotCrashTest.class,
                  work.toString(),
                  volumeDir.toString(),
                  String.valueOf(random.nextLong()))
              .redirectErrorStream(true)
              .redirectOutput(tmp.resolve("child-" + it + ".log").toFile())
              .start();
      if (it == 0) {
        // On a loaded machine the child JVM may need longer than a kill window to start; the
        // first kill waits for its first publication so that some snapshot is always verified.
        awaitFirstSnapshot(volumeDir, child, it);
      }
      Thread.sleep(400 + random.nextInt(1200));
      assertTrue(child.isAlive(), "child died on its own: see child-" + it + ".log");
      child.destroyForcibly();
      child.waitFor();
      lastRound = verify(work, volumeDir, lastRound, it);
    }
    assertTrue(lastRound > 0, "no snapshot was ever published");
  }

  /** Waits for the child's first publication, however long its start takes, or its death. */
  private static void awaitFirstSnapshot(Path volumeDir, Process child, int it) throws Exception {
    Path shard = volumeDir.resolve("shards").resolve(SHARD);
    while (!hasSnapshot(shard)) {
      assertTrue(child.isAlive(), "child died on its own: see child-" + it + ".log");
      Thread.sleep(20);
    }
  }

  private static boolean hasSnapshot(Path shard) throws Exception {
    if (!Files.isDirectory(shard)) {
      return false;
    }
    try (Stream<Path> files = Files.list(shard)) {
      return files.anyMatch(p -> p.getFileName().toString().startsWith("snapshot-"));
    }
  }

  private long verify(Path work, Path volumeDir, long previousRound, int it) throws Exception {
    long round;
    try (FileStorage volume = FileStorage.open(volumeDir, true)) {
      SnapshotStore store = new SnapshotStore(volume);
      if (store.latest(SHARD).isEmpty()) {
        return previousRound;
      }
      try (Db db = SnapshotRestore.resume(tmp.resolve("restored-" + it), volume, SHARD, config())) {
        byte[][] r = db.get(0, "default", ROUND_KEY);
        assertNotNull(r, "the round marker is in every snapshot");
        round = Bytes.getLong(r[0], 0);
        assertTrue(round >= previousRound, "published snapshots never go back");
        for (int i = 0; i < KEYS; i++) {
          byte[][] row = db.get(i % SnapshotTest.BUCKETS, "default", key(i));
          byte[] want = expected(i, round);
          if (want == null) {
            assertNull(row, "key " + i + " round " + round);
          } else {
            assertNotNull(row, "key " + i + " round " + round);
            assertArrayEquals(want, row[0], "key " + i + " round " + round);
          }
        }
        db.compactAll(); // reads every file of the snapshot
      }
      // Reopening the crashed writer cleans up: local files outside its manifest and uploads of
      // snapshots that never got published.
      try (Db db = Db.open(work, config());
          SnapshotManager snaps = SnapshotManager.open(db, volume, SHARD)) {
        // Compactions the reopen started may still run; once they are done the directory holds
        // exactly the live files, with no deletion left on its way.
        db.waitForCompactions();
        Set<String> referenced = new HashSet<>();
        for (long id : snaps.published()) {
          store.require(SHARD, id).files().forEach(f -> referenced.add(f.volumePath()));
        }
        assertEquals(referenced, new HashSet<>(store.dataFiles(SHARD)), "uploads after " + it);
        assertEquals(LocalFiles.live(db), LocalFiles.onDisk(work), "local files after " + it);
        // Writing on replaces the fallback manifest: what only it listed goes (the crashed writer
        // had kept those files for it), and again nothing else is left.
        byte[][] marker = db.get(0, "default", ROUND_KEY);
        if (marker != null) {
          db.put(0, "default", ROUND_KEY, 0, marker[0]);
          db.flush();
          db.waitForCompactions();
          assertEquals(
              LocalFiles.live(db), LocalFiles.onDisk(work), "local files written on after " + it);
        }
      }
    }
    return round;
  }
}
