package io.cobble.snapshot;

import static io.cobble.snapshot.GlobalSnapshotTest.shardConfig;
import static io.cobble.snapshot.ShardRef.of;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Db;
import io.cobble.storage.file.FileStorage;
import io.cobble.util.ByteWriter;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GlobalPinTest {
  @TempDir Path tmp;

  @Test
  void pinnedGlobalSnapshotOutlivesRetentionUntilMovedOrExpired() throws Exception {
    AtomicLong clock = new AtomicLong(1_000);
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true);
        Db a = Db.open(tmp.resolve("a"), shardConfig("0-7"));
        SnapshotManager sa = SnapshotManager.open(a, volume, "a")) {
      SnapshotStore store = new SnapshotStore(volume);
      GlobalSnapshotCoordinator coordinator =
          new GlobalSnapshotCoordinator(volume, SnapshotTest.BUCKETS, 1, clock::get);
      commitRound(a, sa, coordinator, 0);
      store.pinGlobals(new GlobalPin("reader-1", List.of(1L), 2_000));
      commitRound(a, sa, coordinator, 1);
      commitRound(a, sa, coordinator, 2);
      assertEquals(List.of(1L, 3L), coordinator.ids());
      GlobalSnapshot.Part first = coordinator.read(1).partFor(0);
      try (Db old =
          SnapshotRestore.resume(
              tmp.resolve("r1"),
              volume,
              first.shardId(),
              first.snapshotId(),
              SnapshotTest.config(0))) {
        SnapshotTest.check(old, 0, 500, 0);
      }

      // The reader moves on: the first snapshot goes at the next commit, the pinned one stays.
      store.pinGlobals(new GlobalPin("reader-1", List.of(3L), 2_000));
      commitRound(a, sa, coordinator, 3);
      assertEquals(List.of(3L, 4L), coordinator.ids());
      assertEquals(referencedFiles(store), new HashSet<>(volume.list("data/")));

      // The reader dies: its pin expires and stops holding the snapshot back.
      clock.set(2_000);
      commitRound(a, sa, coordinator, 4);
      assertEquals(List.of(5L), coordinator.ids());
      assertTrue(store.globalPins().isEmpty());
      assertEquals(referencedFiles(store), new HashSet<>(volume.list("data/")));
      assertEquals(List.of(5L), sa.published());
    }
  }

  @Test
  void checkpointIdIsRecordedAndFormatOneManifestsStayReadable() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true);
        Db a = Db.open(tmp.resolve("a"), shardConfig("0-7"));
        SnapshotManager sa = SnapshotManager.open(a, volume, "a")) {
      SnapshotTest.write(a, 0, 100, 0);
      long id = sa.snapshot().published().join().id();
      GlobalSnapshotCoordinator coordinator =
          new GlobalSnapshotCoordinator(volume, SnapshotTest.BUCKETS, 0);
      coordinator.commit(List.of(of("a", id)), 42);
      coordinator.commit(List.of(of("a", id)));
      SnapshotStore store = new SnapshotStore(volume);
      assertEquals(42, store.requireGlobal(1).checkpointId());
      assertEquals(GlobalSnapshot.NO_CHECKPOINT, store.requireGlobal(2).checkpointId());
    }
    ByteWriter v1 = new ByteWriter(64);
    v1.writeVarInt(1);
    v1.writeVarLong(7);
    v1.writeVarInt(8);
    v1.writeVarInt(1);
    v1.writeString("a");
    v1.writeVarLong(3);
    v1.writeVarInt(1);
    v1.writeVarInt(0);
    v1.writeVarInt(7);
    GlobalSnapshot old = GlobalSnapshot.decode(v1.toByteArray());
    assertEquals(7, old.id());
    assertEquals(GlobalSnapshot.NO_CHECKPOINT, old.checkpointId());
    assertEquals(3, old.partFor(5).snapshotId());
  }

  @Test
  void droppedShardLosesItsSnapshotsButNotFilesOthersStillUse() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true);
        Db old = Db.open(tmp.resolve("old"), shardConfig("0-7"))) {
      SnapshotStore store = new SnapshotStore(volume);
      GlobalSnapshotCoordinator coordinator =
          new GlobalSnapshotCoordinator(volume, SnapshotTest.BUCKETS, 1);
      long oldId;
      try (SnapshotManager so = SnapshotManager.open(old, volume, "old")) {
        SnapshotTest.write(old, 0, 500, 0);
        old.compactAll();
        so.snapshot().published().join();
        SnapshotTest.write(old, 0, 500, 1);
        oldId = so.snapshot().published().join().id();
      }
      coordinator.commit(List.of(of("old", oldId)));
      // The successor uses one of the old shard's files in place: its snapshot refers to it.
      ShardSnapshot source = store.require("old", oldId);
      SnapshotFile adopted = source.files().get(0);
      ShardSnapshot successor =
          new ShardSnapshot(
              "new",
              1,
              0,
              SnapshotTest.BUCKETS,
              source.ranges(),
              source.schema(),
              source.nextFileNumber(),
              List.of(adopted));
      store.publish(successor);
      IllegalStateException inUse =
          assertThrows(IllegalStateException.class, () -> coordinator.dropShard("old", true));
      assertTrue(inUse.getMessage().contains("still part of global snapshots"), inUse.getMessage());
      coordinator.commit(List.of(of("new", 1)));
      // A pin its writer left keeps the shard unless the caller says it may go.
      store.pin("old", oldId);
      assertThrows(IllegalStateException.class, () -> coordinator.dropShard("old", false));

      List<String> deleted = coordinator.dropShard("old", true);
      assertTrue(store.pinnedIds("old").isEmpty());
      assertFalse(deleted.isEmpty());
      assertTrue(store.snapshotIds("old").isEmpty());
      assertEquals(List.of(adopted.volumePath()), volume.list("data/"));
      assertEquals(referencedFiles(store), new HashSet<>(volume.list("data/")));
    }
  }

  private static void commitRound(
      Db db, SnapshotManager manager, GlobalSnapshotCoordinator coordinator, int gen) {
    SnapshotTest.write(db, 0, 500, gen);
    db.compactAll();
    long id = manager.snapshot().published().join().id();
    coordinator.commit(List.of(of(manager.shardId(), id)));
  }

  private static Set<String> referencedFiles(SnapshotStore store) {
    Set<String> out = new HashSet<>();
    for (String shard : store.shardIds()) {
      for (long id : store.snapshotIds(shard)) {
        store.require(shard, id).files().forEach(f -> out.add(f.volumePath()));
      }
    }
    return out;
  }
}
