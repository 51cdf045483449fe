package io.cobble.snapshot;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.storage.file.FileStorage;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A scratch restore ({@code Config.Builder.scratchRestore}) skips only the fsyncs of the restore's
 * own metadata: the shard it opens holds the snapshot, keeps the setting through the restore's
 * config rewrites, leaves no restore marker, and what it writes afterwards survives a reopen.
 */
class ScratchRestoreTest {
  @TempDir Path tmp;

  @Test
  void aScratchRestoreOpensTheSnapshotAndTheShardWorksOnAfterIt() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true)) {
      try (Db db = Db.open(tmp.resolve("work"), SnapshotTest.config(0));
          SnapshotManager snaps = SnapshotManager.open(db, volume, "shard-a")) {
        SnapshotTest.write(db, 0, 2000, 1);
        db.flush();
        snaps.snapshot().published().join();
      }
      Config scratch = SnapshotTest.config(0).toBuilder().scratchRestore(true).build();
      assertTrue(scratch.toBuilder().build().scratchRestore(), "kept by toBuilder");
      assertFalse(SnapshotTest.config(0).scratchRestore(), "off unless the embedder sets it");
      Path restored = tmp.resolve("restored");
      try (Db db = SnapshotRestore.resume(restored, volume, "shard-a", scratch)) {
        assertTrue(db.config().scratchRestore(), "kept through the restore's config rewrite");
        assertFalse(Files.exists(restored.resolve(Db.RESTORE_MARKER)), "restore finished");
        SnapshotTest.check(db, 0, 2000, 1);
        SnapshotTest.write(db, 2000, 2500, 2);
        db.flush();
      }
      try (Db db = Db.open(restored, SnapshotTest.config(0), volume)) {
        SnapshotTest.check(db, 0, 2000, 1);
        SnapshotTest.check(db, 2000, 2500, 2);
      }
    }
  }
}
