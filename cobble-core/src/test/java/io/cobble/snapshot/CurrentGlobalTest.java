package io.cobble.snapshot;

import static io.cobble.snapshot.ShardRef.of;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.CobbleException;
import io.cobble.Db;
import io.cobble.storage.ForwardingStorage;
import io.cobble.storage.file.FileStorage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SnapshotStore#currentGlobal} while a committer keeps moving {@code CURRENT} on: a sink
 * writer closing while the committer publishes the end of input read {@code CURRENT} = 1, then
 * global snapshot 1 was expired by the commit of 2 (retention 1), and the writer failed the
 * finished job with "global snapshot 1 ... is missing".
 */
class CurrentGlobalTest {
  @TempDir Path tmp;

  @Test
  void aGlobalExpiredUnderAMovingCurrentIsReadAgain() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true);
        Db db = Db.open(tmp.resolve("a"), GlobalSnapshotTest.shardConfig("0-7"));
        SnapshotManager shard = SnapshotManager.open(db, volume, "a")) {
      GlobalSnapshotCoordinator coordinator =
          new GlobalSnapshotCoordinator(volume, SnapshotTest.BUCKETS, 1);
      GlobalSnapshotTest.writeOwned(db, 0, 500, 0);
      coordinator.commit(List.of(of("a", shard.snapshot().published().join().id())));
      // The next commit lands between the read of CURRENT and the read of the snapshot it names.
      boolean[] committed = {false};
      ForwardingStorage racing =
          new ForwardingStorage(volume) {
            @Override
            public byte[] readAll(String path) throws IOException {
              if (!committed[0] && path.startsWith(SnapshotStore.globalPath(1))) {
                committed[0] = true;
                GlobalSnapshotTest.writeOwned(db, 0, 500, 1);
                coordinator.commit(List.of(of("a", shard.snapshot().published().join().id())));
              }
              return delegate.readAll(path);
            }
          };
      SnapshotStore store = new SnapshotStore(racing);
      GlobalSnapshot current = store.currentGlobal().orElseThrow();
      assertTrue(committed[0], "the race was staged");
      assertEquals(2, current.id());
      assertEquals(List.of(2L), store.globalIds(), "global snapshot 1 is expired");
    }
  }

  @Test
  void aGlobalMissingWhileCurrentNamesItIsAnErrorAndNoCommitIsEmpty() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true);
        Db db = Db.open(tmp.resolve("a"), GlobalSnapshotTest.shardConfig("0-7"));
        SnapshotManager shard = SnapshotManager.open(db, volume, "a")) {
      SnapshotStore store = new SnapshotStore(volume);
      assertFalse(store.currentGlobal().isPresent());
      GlobalSnapshotTest.writeOwned(db, 0, 500, 0);
      new GlobalSnapshotCoordinator(volume, SnapshotTest.BUCKETS, 1)
          .commit(List.of(of("a", shard.snapshot().published().join().id())));
      for (String path : volume.list("global/")) {
        if (path.startsWith(SnapshotStore.globalPath(1))) {
          volume.delete(path);
        }
      }
      CobbleException e = assertThrows(CobbleException.class, store::currentGlobal);
      assertTrue(e.getMessage().contains("global snapshot 1"), e.getMessage());
    }
  }
}
