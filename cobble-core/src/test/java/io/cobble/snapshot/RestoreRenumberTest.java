package io.cobble.snapshot;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.storage.Storage;
import io.cobble.storage.file.FileStorage;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * After a restore to an older snapshot the Db numbers new tables from that snapshot on, so a new
 * table can have the name, size and entry count of a table uploaded on the abandoned line; the next
 * snapshot must upload it, not name the old copy.
 */
class RestoreRenumberTest {
  @TempDir Path tmp;

  private static Config config() {
    return Config.builder()
        .set("total-buckets", 1)
        .set("snapshot.retention", 0)
        .set("compaction.l0-file-limit", 100)
        .build();
  }

  private static void write(Db db, char fill) {
    for (int i = 0; i < 50; i++) {
      db.put(
          0,
          "default",
          ("k" + i).getBytes(UTF_8),
          0,
          String.valueOf(fill).repeat(8).getBytes(UTF_8));
    }
    db.flush();
  }

  private static void check(Db db, char fill) {
    for (int i = 0; i < 50; i++) {
      assertArrayEquals(
          String.valueOf(fill).repeat(8).getBytes(UTF_8),
          db.get(0, "default", ("k" + i).getBytes(UTF_8))[0]);
    }
  }

  @Test
  void aNewTableWithAnAbandonedTablesNameSizeAndEntriesIsUploaded() throws Exception {
    try (Storage volume = FileStorage.open(tmp.resolve("volume"), true)) {
      Path dir = tmp.resolve("db");
      long first;
      Db db = Db.open(dir, config());
      try (SnapshotManager m = SnapshotManager.open(db, volume, "s")) {
        write(db, 'a');
        first = m.snapshot().published().join().id();
        write(db, 'b');
        m.snapshot().published().join();
      }
      db.close();
      db = SnapshotRestore.resume(dir, volume, "s", first, config());
      long restored;
      try (SnapshotManager m = SnapshotManager.open(db, volume, "s")) {
        // The same table number, size and entries as the abandoned 'b' table, other rows.
        write(db, 'c');
        restored = m.snapshot().published().join().id();
      }
      db.close();
      try (Db again = SnapshotRestore.resume(dir, volume, "s", restored, config())) {
        check(again, 'c');
      }
    }
  }
}
