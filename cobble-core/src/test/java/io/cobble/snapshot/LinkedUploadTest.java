package io.cobble.snapshot;

import static io.cobble.snapshot.SnapshotTest.check;
import static io.cobble.snapshot.SnapshotTest.config;
import static io.cobble.snapshot.SnapshotTest.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Db;
import io.cobble.storage.Storage;
import io.cobble.storage.file.FileStorage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshot uploads to a volume on the working directory's file system hard-link the tables instead
 * of copying them; the volume's names keep the tables' bytes after compaction deletes the working
 * names, and a volume that cannot link gets copies.
 */
class LinkedUploadTest {

  @TempDir Path tmp;

  @Test
  void tablesAreLinkedAndOutliveTheirWorkingFiles() throws Exception {
    Path work = tmp.resolve("work");
    Path volumeDir = tmp.resolve("volume");
    try (Storage volume = FileStorage.open(volumeDir, true)) {
      List<SnapshotFile> firstFiles;
      try (Db db = Db.open(work, config(0));
          SnapshotManager snaps = SnapshotManager.open(db, volume, "s")) {
        write(db, 0, 3000, 1);
        db.flush();
        db.waitForCompactions();
        ShardSnapshot first = snaps.snapshot().published().join();
        long tableBytes = 0;
        int tables = 0;
        int vlogs = 0;
        for (SnapshotFile f : first.files()) {
          Path onVolume = volumeDir.resolve(f.volumePath());
          if (f.isVlog()) {
            Path working = db.versionSet().vlogPath(f.number());
            assertFalse(Files.isSameFile(onVolume, working), "value log " + f + " is copied");
            assertArrayEquals(Files.readAllBytes(working), Files.readAllBytes(onVolume));
            vlogs++;
          } else {
            Path working = db.versionSet().tablePath(f.number());
            assertTrue(Files.isSameFile(onVolume, working), "table " + f + " is linked");
            tableBytes += f.size();
            tables++;
          }
        }
        assertTrue(tables > 1 && vlogs > 0, tables + " tables, " + vlogs + " value logs");
        assertEquals(tableBytes, snaps.bytesLinked());
        assertEquals(tables, snaps.filesLinked());
        assertEquals(first.dataBytes(), snaps.bytesUploaded(), "a link counts as an upload");
        assertEquals(first.files().size(), snaps.filesUploaded());

        // Compaction rewrites every key, so the Db deletes the first snapshot's tables.
        write(db, 0, 3000, 2);
        db.compactAll();
        snaps.snapshot().published().join();
        firstFiles = first.files();
      }
      // With every working name gone, the volume's names alone hold the tables' bytes.
      deleteTree(work);
      for (SnapshotFile f : firstFiles) {
        Path onVolume = volumeDir.resolve(f.volumePath());
        assertEquals(f.size(), Files.size(onVolume));
        assertEquals(1, Files.getAttribute(onVolume, "unix:nlink"), f + " has one name left");
      }
      try (Db db = SnapshotRestore.resume(tmp.resolve("r1"), volume, "s", 1, config(0))) {
        check(db, 0, 3000, 1);
      }
      try (Db db = SnapshotRestore.resume(tmp.resolve("r2"), volume, "s", 2, config(0))) {
        check(db, 0, 3000, 2);
      }
    }
  }

  @Test
  void aVolumeThatCannotLinkGetsCopies() throws Exception {
    Path work = tmp.resolve("work");
    Path volumeDir = tmp.resolve("volume");
    // A forwarding wrapper does not forward links: the storage answers that it cannot link.
    try (CountingStorage volume = new CountingStorage(FileStorage.open(volumeDir, true))) {
      try (Db db = Db.open(work, config(0));
          SnapshotManager snaps = SnapshotManager.open(db, volume, "s")) {
        write(db, 0, 3000, 1);
        db.flush();
        db.waitForCompactions();
        ShardSnapshot s = snaps.snapshot().published().join();
        for (SnapshotFile f : s.files()) {
          Path working =
              f.isVlog()
                  ? db.versionSet().vlogPath(f.number())
                  : db.versionSet().tablePath(f.number());
          Path onVolume = volumeDir.resolve(f.volumePath());
          assertFalse(Files.isSameFile(onVolume, working), f + " is copied");
          assertArrayEquals(Files.readAllBytes(working), Files.readAllBytes(onVolume));
        }
        assertEquals(0, snaps.bytesLinked());
        assertEquals(0, snaps.filesLinked());
        assertEquals(s.dataBytes(), snaps.bytesUploaded());
        assertTrue(volume.bytesWritten.get() >= snaps.bytesUploaded(), "copied through create");
      }
      deleteTree(work);
      try (Db db = SnapshotRestore.resume(tmp.resolve("r"), volume, "s", config(0))) {
        check(db, 0, 3000, 1);
      }
    }
  }

  private static void deleteTree(Path dir) throws Exception {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }
}
