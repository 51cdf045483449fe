package io.cobble.snapshot;

import static io.cobble.snapshot.ShardRef.of;
import static io.cobble.snapshot.SnapshotTest.check;
import static io.cobble.snapshot.SnapshotTest.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.storage.file.FileStorage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GlobalSnapshotTest {
  @TempDir Path tmp;

  static Config shardConfig(String ranges) {
    return Config.builder()
        .setAll(SnapshotTest.config(0).values())
        .set("bucket-ranges", ranges)
        .build();
  }

  /** Writes only the keys whose bucket the shard owns. */
  static void writeOwned(Db db, int from, int to, int gen) {
    for (int i = from; i < to; i++) {
      if (db.config().ownsBucket(i % SnapshotTest.BUCKETS)) {
        write(db, i, i + 1, gen);
      }
    }
  }

  @Test
  void coordinatorCombinesShardsRejectsGapsAndOverlapsAndExpiresOldGlobals() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true);
        Db a = Db.open(tmp.resolve("a"), shardConfig("0-3"));
        Db b = Db.open(tmp.resolve("b"), shardConfig("4-7"));
        SnapshotManager sa = SnapshotManager.open(a, volume, "a");
        SnapshotManager sb = SnapshotManager.open(b, volume, "b")) {
      GlobalSnapshotCoordinator coordinator =
          new GlobalSnapshotCoordinator(volume, SnapshotTest.BUCKETS, 2);
      List<GlobalSnapshot> globals = new ArrayList<>();
      for (int round = 0; round < 4; round++) {
        writeOwned(a, 0, 2000, round);
        writeOwned(b, 0, 2000, round);
        a.compactAll();
        b.compactAll();
        long ia = sa.snapshot().published().join().id();
        long ib = sb.snapshot().published().join().id();
        if (round == 0) {
          IllegalArgumentException gap =
              assertThrows(
                  IllegalArgumentException.class, () -> coordinator.commit(List.of(of("a", ia))));
          assertTrue(
              gap.getMessage().contains("buckets 4-7 are covered by no shard"), gap.getMessage());
          IllegalArgumentException overlap =
              assertThrows(
                  IllegalArgumentException.class,
                  () -> coordinator.commit(List.of(of("a", ia), of("b", ib), of("a", ia))));
          assertTrue(overlap.getMessage().contains("covered by both"), overlap.getMessage());
        }
        globals.add(coordinator.commit(List.of(of("b", ib), of("a", ia))));
      }
      assertEquals(4, coordinator.current().id());
      assertEquals(List.of(3L, 4L), coordinator.ids());
      // Shard snapshots only expired globals used are gone; the kept ones stay restorable.
      assertEquals(List.of(3L, 4L), sa.published());
      assertEquals(List.of(3L, 4L), sb.published());
      assertThrows(IllegalStateException.class, () -> sa.expire(3));
      Set<String> referenced = new HashSet<>();
      for (String shard : List.of("a", "b")) {
        for (long id : new SnapshotStore(volume).snapshotIds(shard)) {
          sa.store().require(shard, id).files().forEach(f -> referenced.add(f.volumePath()));
        }
      }
      assertEquals(referenced, new HashSet<>(volume.list("data/")));
      assertFalse(referenced.isEmpty());
    }
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true)) {
      GlobalSnapshot g = new GlobalSnapshotCoordinator(volume, SnapshotTest.BUCKETS, 2).read(3);
      GlobalSnapshot.Part pa = g.partFor(1);
      try (Db a =
          SnapshotRestore.resume(
              tmp.resolve("ra"), volume, pa.shardId(), pa.snapshotId(), SnapshotTest.config(0))) {
        for (int i = 0; i < 2000; i++) {
          if (i % SnapshotTest.BUCKETS < 4) {
            check(a, i, i + 1, 2);
          }
        }
      }
    }
  }
}
