package io.cobble.snapshot;

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
import io.cobble.storage.file.FileStorage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotTest {
  static final int BUCKETS = 8;

  @TempDir Path tmp;
  CountingStorage volume;

  static Config config(int retention) {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "32kb")
        .set("compaction.level-base-size", "64kb")
        .set("value-separation.threshold", "200")
        .set("snapshot.retention", retention)
        .build();
  }

  static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  static byte[] value(int i, int gen) {
    // Every 7th value is large enough to go to a value log.
    String base = "v" + gen + "-" + i;
    return (i % 7 == 0 ? base.repeat(40) : base).getBytes(UTF_8);
  }

  static void write(Db db, int from, int to, int gen) {
    for (int i = from; i < to; i++) {
      db.put(i % BUCKETS, "default", key(i), 0, value(i, gen));
    }
  }

  static void check(Db db, int from, int to, int gen) {
    for (int i = from; i < to; i++) {
      byte[][] row = db.get(i % BUCKETS, "default", key(i));
      assertArrayEquals(value(i, gen), row == null ? null : row[0], "key " + i);
    }
  }

  @BeforeEach
  void openVolume() throws Exception {
    volume = new CountingStorage(FileStorage.open(tmp.resolve("volume"), true));
  }

  @AfterEach
  void closeVolume() throws Exception {
    volume.close();
  }

  @Test
  void incrementalSnapshotUploadsOnlyNewFilesAndResumeReadsOnlyMetadata() throws Exception {
    Path work = tmp.resolve("work");
    long firstUpload;
    long id2;
    try (Db db = Db.open(work, config(0));
        SnapshotManager snaps = SnapshotManager.open(db, volume, "shard-a")) {
      write(db, 0, 3000, 1);
      db.flush();
      db.waitForCompactions();
      PendingSnapshot s1 = snaps.snapshot();
      assertEquals(1, s1.id());
      ShardSnapshot m1 = s1.published().join();
      firstUpload = snaps.bytesUploaded();
      assertEquals(m1.dataBytes(), firstUpload);
      assertTrue(firstUpload > 0);
      assertTrue(m1.files().stream().anyMatch(SnapshotFile::isVlog), "vlog files are listed");

      write(db, 3000, 3200, 1);
      PendingSnapshot s2 = snaps.snapshot();
      id2 = s2.id();
      ShardSnapshot m2 = s2.published().join();
      long secondUpload = snaps.bytesUploaded() - firstUpload;
      // Only the new L0 file(s) went up; everything from snapshot 1 was referenced.
      assertTrue(secondUpload > 0 && secondUpload < firstUpload / 4, "uploaded " + secondUpload);
      assertEquals(m2.dataBytes(), firstUpload + secondUpload);
      write(db, 3200, 3300, 2); // after the snapshot: must not be restored
    }
    Path restored = tmp.resolve("restored");
    long before = volume.bytesRead.get();
    try (Db db = SnapshotRestore.resume(restored, volume, "shard-a", config(0))) {
      long read = volume.bytesRead.get() - before;
      assertTrue(read < 64 * 1024, "restore read " + read + " bytes: metadata only");
      check(db, 0, 3200, 1);
      assertNull(db.get(3250 % BUCKETS, "default", key(3250)));
      // The restored Db works: writes, flushes, compacts, and a snapshot references old files.
      write(db, 0, 500, 3);
      db.compactAll();
      check(db, 0, 500, 3);
      check(db, 500, 3200, 1);
      try (SnapshotManager snaps = SnapshotManager.open(db, volume, "shard-a")) {
        ShardSnapshot m3 = snaps.snapshot().published().join();
        assertEquals(id2 + 1, m3.id());
      }
    }
    try (Db db = SnapshotRestore.resume(tmp.resolve("again"), volume, "shard-a", config(0))) {
      check(db, 0, 500, 3);
      check(db, 500, 3200, 1);
    }
  }

  @Test
  void snapshotIsPendingUntilPublishedAndCanBeCancelled() throws Exception {
    try (Db db = Db.open(tmp.resolve("work"), config(0));
        SnapshotManager snaps = SnapshotManager.open(db, volume, "s")) {
      write(db, 0, 2000, 1);
      PendingSnapshot published = snaps.snapshot();
      published.published().join();
      assertFalse(snaps.cancel(published.id()), "a published snapshot cannot be cancelled");

      write(db, 2000, 2100, 1);
      PendingSnapshot p = snaps.snapshot();
      boolean cancelled = snaps.cancel(p.id());
      if (cancelled) {
        CompletionException e = assertThrows(CompletionException.class, p.published()::join);
        assertTrue(e.getCause() instanceof SnapshotCancelledException);
        assertEquals(List.of(published.id()), snaps.published());
      } else {
        // The upload won the race; then it must really be published.
        assertEquals(p.id(), p.published().join().id());
      }
      PendingSnapshot next = snaps.snapshot();
      assertTrue(next.id() > p.id(), "ids grow even past cancelled snapshots");
      next.published().join();
    }
  }

  @Test
  void retentionExpiresOldSnapshotsAndDeletesOnlyTheirFiles() throws Exception {
    Path work = tmp.resolve("work");
    try (Db db = Db.open(work, config(2));
        SnapshotManager snaps = SnapshotManager.open(db, volume, "s")) {
      for (int round = 0; round < 5; round++) {
        write(db, 0, 1500, round);
        db.compactAll();
        long id = snaps.snapshot().published().join().id();
        if (round == 1) {
          snaps.pin(id);
        }
      }
      assertEquals(List.of(2L, 4L, 5L), snaps.published());
      assertThrows(IllegalStateException.class, () -> snaps.expire(2));
      assertThrows(IllegalStateException.class, () -> snaps.expire(5));
      snaps.unpin(2);
      snaps.expire(2);
      assertEquals(List.of(4L, 5L), snaps.published());
      // Every data file on the volume is referenced by a remaining snapshot, and vice versa.
      java.util.Set<String> referenced = new java.util.HashSet<>();
      for (long id : snaps.published()) {
        snaps.store().require("s", id).files().forEach(f -> referenced.add(f.volumePath()));
      }
      assertEquals(referenced, new java.util.HashSet<>(volume.list("data/")));
    }
    try (Db db = SnapshotRestore.resume(tmp.resolve("r"), volume, "s", 4, config(0))) {
      check(db, 0, 1500, 3);
    }
  }

  @Test
  void pinSurvivesReopenAndKeepsTheSnapshotOutOfRetention() throws Exception {
    Path work = tmp.resolve("work");
    try (Db db = Db.open(work, config(1));
        SnapshotManager snaps = SnapshotManager.open(db, volume, "s")) {
      write(db, 0, 1500, 0);
      long id = snaps.snapshot().published().join().id();
      snaps.pin(id);
    }
    try (Db db = Db.open(work, config(1));
        SnapshotManager snaps = SnapshotManager.open(db, volume, "s")) {
      assertEquals(java.util.Set.of(1L), snaps.pinned());
      for (int round = 1; round < 4; round++) {
        write(db, 0, 1500, round);
        db.compactAll();
        snaps.snapshot().published().join();
      }
      assertEquals(List.of(1L, 4L), snaps.published(), "retention 1 keeps the pinned one");
      IllegalStateException pinned =
          assertThrows(IllegalStateException.class, () -> snaps.expire(1));
      assertTrue(pinned.getMessage().contains("pinned"), pinned.getMessage());
      snaps.unpin(1);
      write(db, 0, 1500, 4);
      snaps.snapshot().published().join();
      assertEquals(List.of(5L), snaps.published());
      assertEquals(java.util.Set.of(), snaps.pinned());
    }
    // Its data stayed intact while pinned: the oldest files were never collected.
    try (Db db = SnapshotRestore.resume(tmp.resolve("r"), volume, "s", config(0))) {
      check(db, 0, 1500, 4);
    }
  }

  @Test
  void snapshotHoldsExactlyTheWritesBeforeItsCallNotThoseAfter() throws Exception {
    Path work = tmp.resolve("work");
    List<PendingSnapshot> taken = new java.util.ArrayList<>();
    try (Db db = Db.open(work, config(0));
        SnapshotManager snaps = SnapshotManager.open(db, volume, "s")) {
      // Each snapshot is followed at once by overwrites and new keys, which fill and rotate later
      // memtables while the snapshot's own flush may still be running.
      for (int gen = 1; gen <= 3; gen++) {
        write(db, 0, 2000 * gen, gen);
        taken.add(snaps.snapshot());
      }
      write(db, 0, 8000, 4);
      for (PendingSnapshot p : taken) {
        p.published().join();
      }
    }
    for (int gen = 1; gen <= 3; gen++) {
      try (Db db =
          SnapshotRestore.resume(
              tmp.resolve("r" + gen), volume, "s", taken.get(gen - 1).id(), config(0))) {
        check(db, 0, 2000 * gen, gen);
        for (int i = 2000 * gen; i < 8000; i += 13) {
          assertNull(db.get(i % BUCKETS, "default", key(i)), "key " + i + " came later");
        }
      }
    }
  }

  @Test
  void missingAndCorruptSnapshotsFailClearly() throws Exception {
    CobbleException none =
        assertThrows(
            CobbleException.class,
            () -> SnapshotRestore.resume(tmp.resolve("x"), volume, "nobody", config(0)));
    assertTrue(none.getMessage().contains("no intact snapshot of shard nobody"), none.getMessage());
    try (Db db = Db.open(tmp.resolve("work"), config(0));
        SnapshotManager snaps = SnapshotManager.open(db, volume, "s")) {
      write(db, 0, 500, 1);
      snaps.snapshot().published().join();
      write(db, 0, 500, 2);
      snaps.snapshot().published().join();
    }
    CobbleException missing =
        assertThrows(
            CobbleException.class,
            () -> SnapshotRestore.resume(tmp.resolve("y"), volume, "s", 7, config(0)));
    assertTrue(missing.getMessage().contains("does not exist"), missing.getMessage());
    // Damage the newest manifest: explicit restore names it, latest falls back to snapshot 1.
    Path manifest = tmp.resolve("volume").resolve(SnapshotStore.manifestPath("s", 2));
    byte[] bytes = Files.readAllBytes(manifest);
    bytes[bytes.length / 2] ^= 0x40;
    Files.write(manifest, bytes);
    CobbleException corrupt =
        assertThrows(
            CobbleException.class,
            () -> SnapshotRestore.resume(tmp.resolve("z"), volume, "s", 2, config(0)));
    assertTrue(corrupt.getMessage().contains("corrupt"), corrupt.getMessage());
    try (Db db = SnapshotRestore.resume(tmp.resolve("w"), volume, "s", config(0))) {
      check(db, 0, 500, 1);
    }
    // A restore cut short leaves its marker: the directory must not open as an (empty) Db.
    Files.createFile(tmp.resolve("w").resolve(Db.RESTORE_MARKER));
    CobbleException interrupted =
        assertThrows(CobbleException.class, () -> Db.open(tmp.resolve("w"), config(0)));
    assertTrue(interrupted.getMessage().contains("interrupted restore"), interrupted.getMessage());
    try (Db db = SnapshotRestore.resume(tmp.resolve("w"), volume, "s", config(0))) {
      check(db, 0, 500, 1);
    }
  }

  @Test
  void openFromSnapshotWithNewIdentityHoldsALeaseUntilItsOwnSnapshot() throws Exception {
    try (Db db = Db.open(tmp.resolve("a"), config(1));
        SnapshotManager snaps = SnapshotManager.open(db, volume, "a")) {
      write(db, 0, 2000, 1);
      snaps.snapshot().published().join();
    }
    SnapshotStore store = new SnapshotStore(volume);
    try (Db b =
        SnapshotRestore.openFromSnapshot(tmp.resolve("b"), volume, "a", 1, "b", config(0))) {
      assertEquals(1, store.leasePaths("b").size());
      // The source moves on and its retention drops snapshot 1; b's files survive the lease.
      try (Db a = SnapshotRestore.resume(tmp.resolve("a2"), volume, "a", config(1));
          SnapshotManager snaps = SnapshotManager.open(a, volume, "a")) {
        write(a, 0, 2000, 2);
        a.compactAll();
        snaps.snapshot().published().join();
        assertEquals(List.of(2L), snaps.published());
      }
      check(b, 0, 2000, 1);
      try (SnapshotManager snaps = SnapshotManager.open(b, volume, "b")) {
        ShardSnapshot own = snaps.snapshot().published().join();
        // Files b still uses from a are referenced; only what b's own compactions wrote goes up.
        assertTrue(
            own.files().stream().anyMatch(f -> f.volumePath().startsWith("data/a/")),
            "b references a's files in place");
        assertTrue(snaps.bytesUploaded() < own.dataBytes());
      }
      assertTrue(store.leasePaths("b").isEmpty(), "the lease ends with b's first snapshot");
      check(b, 0, 2000, 1);
    }
    try (Db b = SnapshotRestore.resume(tmp.resolve("b2"), volume, "b", config(0))) {
      check(b, 0, 2000, 1);
    }
  }

  @Test
  void dbOpensOverAVolumeSet() throws Exception {
    io.cobble.storage.VolumeSet volumes =
        io.cobble.storage.VolumeSet.local(tmp.resolve("vs").toString());
    try (Db db = Db.open(volumes, config(0));
        SnapshotManager snaps = SnapshotManager.open(db, volumes, "local")) {
      write(db, 0, 100, 1);
      snaps.snapshot().published().join();
      write(db, 0, 100, 2);
    }
    try (Db db = Db.open(volumes, config(0))) {
      check(db, 0, 100, 2);
    }
    try (FileStorage snapshotVolume = FileStorage.open(tmp.resolve("vs"), true);
        Db db =
            SnapshotRestore.resume(
                tmp.resolve("vs-restored"), snapshotVolume, "local", config(0))) {
      check(db, 0, 100, 1);
    }
  }
}
