package io.cobble.flink.table.sink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.cobble.Db;
import io.cobble.flink.table.layout.TableLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sweep of stale sink working directories over real Dbs and real file locks: what a SIGKILLed
 * TaskManager leaves is removed; what a live writer of this JVM or of another process holds, what
 * changed recently and what is not a Cobble writer's directory stay. A live Db of this JVM keeps
 * its lock through the sweep (checked from another process).
 */
class WorkDirSweepTest {

  private static final TableLayout LAYOUT = new TableLayout(8, 1);
  private static final Duration MIN_AGE = Duration.ofMinutes(10);
  private static final Path PROC_LOCKS = Paths.get("/proc/locks");

  @TempDir Path tmp;

  private static Db openDb(Path dir) {
    return Db.open(dir, ShardConfig.of(LAYOUT, 0, 1 << 20));
  }

  /** A shard with a flushed table file, closed again as a dead writer would leave it (unlocked). */
  private static void deadShard(Path dir) {
    try (Db db = openDb(dir)) {
      for (int i = 0; i < 100; i++) {
        db.put(
            i % 8, TableLayout.FAMILY, ("k" + i).getBytes(StandardCharsets.UTF_8), 0, new byte[64]);
      }
      db.flush();
    }
  }

  /**
   * Backdates {@code dir} and everything in it by an hour, except a {@code LOCK} file that exists
   * already when {@code lockToo} is false: setting a file's time opens and closes it, which would
   * release a lock this JVM holds on it.
   */
  private static void age(Path dir, boolean lockToo) throws Exception {
    FileTime old = FileTime.fromMillis(System.currentTimeMillis() - Duration.ofHours(1).toMillis());
    List<Path> paths = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.forEach(paths::add);
    }
    for (Path path : paths) {
      if (lockToo || !path.getFileName().toString().equals("LOCK")) {
        Files.setLastModifiedTime(path, old);
      }
    }
  }

  private static void age(Path dir) throws Exception {
    age(dir, true);
  }

  /** A directory with an old, not yet locked {@code LOCK} file, for a live holder to lock. */
  private static Path oldLockFile(Path dir) throws Exception {
    Files.createDirectories(dir);
    Files.createFile(dir.resolve("LOCK"));
    age(dir);
    return dir;
  }

  private static long bytesIn(Path dir) throws Exception {
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  @Test
  void removesOnlyWhatNoLiveWriterHolds() throws Exception {
    assumeTrue(Files.isReadable(PROC_LOCKS), "lock holders are only listed on Linux");
    Path ownIo = Files.createDirectories(tmp.resolve("flink-io-own"));
    Path deadIo = Files.createDirectories(tmp.resolve("flink-io-dead"));

    Path stale = deadIo.resolve("cobble-sink-stale");
    deadShard(stale);
    Path staleWithoutLock = Files.createDirectories(deadIo.resolve("cobble-sink-nolock"));
    Files.write(staleWithoutLock.resolve("MANIFEST-000001"), new byte[100]);
    Path recent = deadIo.resolve("cobble-sink-recent");
    deadShard(recent);
    Path notOurs = Files.createDirectories(deadIo.resolve("other-dir"));
    Path notInFlinkIo = Files.createDirectories(tmp.resolve("elsewhere").resolve("cobble-sink-x"));
    Path liveHere = oldLockFile(ownIo.resolve("cobble-sink-live"));
    Path liveElsewhere = oldLockFile(deadIo.resolve("cobble-sink-other-jvm"));
    long staleBytes = bytesIn(stale) + bytesIn(staleWithoutLock);

    List<String> answer = new ArrayList<>();
    try (Db live = openDb(liveHere);
        LockHolder otherJvm = LockHolder.start("hold", liveElsewhere.resolve("LOCK"), answer)) {
      assertEquals("locked", answer.get(0));
      for (Path dir : new Path[] {stale, staleWithoutLock, notOurs, notInFlinkIo}) {
        age(dir);
      }
      age(liveHere, false);
      assertTrue(LockHolder.heldByAnotherProcess(liveHere.resolve("LOCK")));

      WorkDirSweep.Removed removed =
          new WorkDirSweep(MIN_AGE, PROC_LOCKS).sweep(new String[] {ownIo.toString()});

      assertEquals(new HashSet<>(List.of(stale, staleWithoutLock)), new HashSet<>(removed.dirs));
      assertEquals(staleBytes, removed.bytes);
      assertFalse(Files.exists(stale));
      assertFalse(Files.exists(staleWithoutLock));
      for (Path kept : new Path[] {recent, notOurs, notInFlinkIo, liveHere, liveElsewhere}) {
        assertTrue(Files.isDirectory(kept), kept + " was removed");
      }
      assertTrue(
          LockHolder.heldByAnotherProcess(liveHere.resolve("LOCK")),
          "the sweep released the lock of a live Db of this JVM");
      live.put(0, TableLayout.FAMILY, new byte[] {1}, 0, new byte[] {2});
      live.flush();
    }
  }

  /** A table a snapshot hard-linked into the table root stays there, and frees no bytes. */
  @Test
  void tablesLinkedElsewhereSurviveAndAreNotCountedAsFreed() throws Exception {
    assumeTrue(Files.isReadable(PROC_LOCKS), "lock holders are only listed on Linux");
    Path io = Files.createDirectories(tmp.resolve("flink-io-dead"));
    Path stale = io.resolve("cobble-sink-stale");
    deadShard(stale);
    Path table;
    try (Stream<Path> files = Files.list(stale)) {
      table = files.filter(p -> p.toString().endsWith(".sst")).findFirst().orElseThrow();
    }
    Path root = Files.createDirectories(tmp.resolve("table-root"));
    Path linked = Files.createLink(root.resolve(table.getFileName()), table);
    byte[] content = Files.readAllBytes(table);
    long unlinkedBytes = bytesIn(stale) - content.length;
    age(stale);

    WorkDirSweep.Removed removed =
        new WorkDirSweep(MIN_AGE, PROC_LOCKS).sweep(new String[] {io.toString()});

    assertEquals(List.of(stale), removed.dirs);
    assertEquals(unlinkedBytes, removed.bytes);
    assertTrue(content.length > 0);
    assertArrayEquals(content, Files.readAllBytes(linked));
  }

  @Test
  void aDirectoryIsRemovedOnceItsHolderIsGone() throws Exception {
    assumeTrue(Files.isReadable(PROC_LOCKS), "lock holders are only listed on Linux");
    Path io = Files.createDirectories(tmp.resolve("flink-io-a"));
    Path dir = io.resolve("cobble-sink-killed");
    deadShard(dir);
    List<String> answer = new ArrayList<>();
    WorkDirSweep sweep = new WorkDirSweep(MIN_AGE, PROC_LOCKS);
    age(dir);
    try (LockHolder holder = LockHolder.start("hold", dir.resolve("LOCK"), answer)) {
      assertEquals("locked", answer.get(0));
      assertTrue(sweep.sweep(new String[] {io.toString()}).dirs.isEmpty());
      assertTrue(Files.isDirectory(dir));
    }
    assertEquals(List.of(dir), sweep.sweep(new String[] {io.toString()}).dirs);
    assertFalse(Files.exists(dir));
  }

  @Test
  void withoutALockListingDirectoriesWithALockStay() throws Exception {
    Path io = Files.createDirectories(tmp.resolve("flink-io-a"));
    Path locked = io.resolve("cobble-sink-unknown");
    deadShard(locked);
    Path unlocked = Files.createDirectories(io.resolve("cobble-sink-empty"));
    age(locked);
    age(unlocked);
    WorkDirSweep.Removed removed =
        new WorkDirSweep(MIN_AGE, tmp.resolve("no-proc-locks")).sweep(new String[] {io.toString()});
    assertEquals(List.of(unlocked), removed.dirs);
    assertTrue(Files.isDirectory(locked));
  }

  @Test
  void theMinimumAgeComesFromTheTaskManagerConfiguration() {
    Configuration conf = new Configuration();
    conf.setString("cobble.sink.stale-dir-min-age", "5 s");
    assertEquals(Duration.ofSeconds(5), conf.get(WorkDirSweep.MIN_AGE));
    assertEquals(Duration.ofMinutes(1), new Configuration().get(WorkDirSweep.MIN_AGE));
  }
}
