package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.version.Version;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fsync.policy}: under {@code publish} every flushed or compacted file is fsynced when
 * written, so nothing waits; under {@code snapshot} exactly the local files written since are left
 * for {@link Db#makeDurable}, which fsyncs each asked-for file once and forgets the files
 * compaction deleted unasked.
 */
class FsyncPolicyTest {
  @TempDir Path dir;

  private static Config config(String policy) {
    return Config.builder()
        .set("total-buckets", 4)
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "32kb")
        .set("compaction.level-base-size", "64kb")
        .set("value-separation.threshold", "200")
        .set("fsync.policy", policy)
        .build();
  }

  private static void write(Db db, int from, int to) {
    for (int i = from; i < to; i++) {
      String v = "v" + i;
      db.put(i % 4, "default", key(i), 0, (i % 7 == 0 ? v.repeat(150) : v).getBytes(UTF_8));
    }
  }

  private static byte[] key(int i) {
    return String.format("k%06d", i).getBytes(UTF_8);
  }

  /** File numbers of {@code v}: every table and value log it names. */
  private static Set<Long> files(Version v) {
    Set<Long> out = new TreeSet<>();
    v.trees().forEach(t -> t.allFiles().forEach(f -> out.add(f.number())));
    out.addAll(v.vlogs());
    return out;
  }

  @Test
  void publishFsyncsEveryFileWhenWritten() {
    try (Db db = Db.open(dir, config("publish"))) {
      write(db, 0, 5000);
      db.flush();
      db.compactAll();
      Version v = db.sealForSnapshot().join();
      try {
        assertFalse(files(v).isEmpty());
        assertEquals(Set.of(), db.filesAwaitingSync());
        assertEquals(0, db.makeDurable(files(v)));
      } finally {
        v.unref();
      }
    }
  }

  @Test
  void snapshotPolicyLeavesEachFileForMakeDurableOnce() {
    try (Db db = Db.open(dir, config("snapshot"))) {
      write(db, 0, 5000);
      Version v = db.sealForSnapshot().join();
      Set<Long> first;
      try {
        first = files(v);
        assertTrue(first.stream().anyMatch(n -> db.versionSet().vlogPath(n).toFile().exists()));
        assertTrue(
            db.filesAwaitingSync().containsAll(first),
            "every file of the snapshot waits: " + db.filesAwaitingSync() + " vs " + first);
        // Asking for some files syncs just those.
        List<Long> half = new ArrayList<>(first).subList(0, first.size() / 2);
        assertEquals(half.size(), db.makeDurable(half));
        Set<Long> rest = new TreeSet<>(first);
        half.forEach(rest::remove);
        assertTrue(db.filesAwaitingSync().containsAll(rest));
        assertTrue(db.filesAwaitingSync().stream().noneMatch(half::contains));
        assertEquals(rest.size(), db.makeDurable(first));
        assertEquals(0, db.makeDurable(first), "a synced file is not synced again");
        assertTrue(db.filesAwaitingSync().stream().noneMatch(first::contains));
      } finally {
        v.unref();
      }

      // Compaction rewrites the synced files into new, unsynced ones and deletes its inputs.
      write(db, 5000, 9000);
      db.flush();
      db.compactAll();
      db.waitForCompactions();
      Version after = db.sealForSnapshot().join();
      try {
        Set<Long> live = files(after);
        Set<Long> fresh = new TreeSet<>(live);
        fresh.removeAll(first);
        assertFalse(fresh.isEmpty());
        assertTrue(db.filesAwaitingSync().containsAll(fresh));
        assertEquals(fresh.size(), db.makeDurable(live));
        assertTrue(db.filesAwaitingSync().stream().noneMatch(live::contains));
        // The flushed files compaction deleted before anyone asked are forgotten, not kept.
        for (long n : db.filesAwaitingSync()) {
          assertTrue(
              db.versionSet().tablePath(n).toFile().exists()
                  || db.versionSet().vlogPath(n).toFile().exists(),
              "file " + n + " was deleted but still waits for its fsync");
        }
      } finally {
        after.unref();
      }
    }
    try (Db db = Db.open(dir, config("snapshot"))) {
      for (int i = 0; i < 9000; i += 97) {
        String v = "v" + i;
        assertArrayEquals(
            (i % 7 == 0 ? v.repeat(150) : v).getBytes(UTF_8), db.get(i % 4, "default", key(i))[0]);
      }
    }
  }

  @Test
  void filesDeletedBeforeAnyoneAskedAreForgottenWithoutMakeDurable() {
    try (Db db = Db.open(dir, config("snapshot"))) {
      int most = 0;
      for (int round = 0; round < 40; round++) {
        write(db, round * 1000, (round + 1) * 1000);
        db.flush();
        db.compactAll();
        db.waitForCompactions();
        int live = db.metrics().liveFiles() + db.versionSet().current().vlogs().size();
        int waiting = db.filesAwaitingSync().size();
        most = Math.max(most, waiting);
        assertTrue(
            waiting <= 2 * live + 64,
            "round " + round + ": " + waiting + " files wait for an fsync, " + live + " live");
      }
      assertTrue(most > 64, "the rounds wrote too few files to test forgetting: " + most);
    }
  }

  @Test
  void fsyncDisabledLeavesNothingToSync() {
    Config c =
        Config.builder()
            .set("total-buckets", 4)
            .set("fsync.enabled", false)
            .set("fsync.policy", "snapshot")
            .build();
    try (Db db = Db.open(dir, c)) {
      write(db, 0, 500);
      db.flush();
      assertEquals(Set.of(), db.filesAwaitingSync());
    }
  }

  @Test
  void unknownPolicyNamesTheOption() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> Config.builder().set("fsync.policy", "later").build());
    assertTrue(e.getMessage().contains("fsync.policy"), e.getMessage());
  }
}
