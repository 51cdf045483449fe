package io.cobble.reader;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.snapshot.CountingStorage;
import io.cobble.snapshot.GlobalSnapshotCoordinator;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.snapshot.SnapshotStore;
import io.cobble.storage.Storage;
import io.cobble.storage.s3.S3Volumes;
import io.cobble.testing.S3ProxyServer;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reader that follows a table being written moves to each new snapshot without reading again the
 * files it already read: the files the new snapshot still lists keep their open tables, with their
 * metadata and kept blocks. Counted on object storage (S3Proxy), where every block read is a
 * request.
 */
class ReaderRefreshTest {
  private static final int BUCKETS = 8;
  private static final int KEYS = 4000;

  @TempDir Path tmp;

  private static Config config(String ranges) {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("bucket-ranges", ranges)
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "32kb")
        .set("block-cache.size", "16mb")
        .build();
  }

  private static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  private static byte[] value(int i, int gen) {
    return ("g" + gen + "-" + i + "-" + "v".repeat(40)).getBytes(UTF_8);
  }

  private static void readAll(Reader reader, int updatedBelow) {
    for (int i = 0; i < KEYS; i++) {
      byte[][] row = reader.get(i % BUCKETS, "default", key(i));
      assertArrayEquals(value(i, i < updatedBelow ? 2 : 1), row[0], "key " + i);
    }
  }

  private static long bytesOfFilesNotIn(ShardSnapshot next, ShardSnapshot previous) {
    Set<Long> before = numbers(previous);
    long bytes = 0;
    for (SnapshotFile f : next.files()) {
      if (!before.contains(f.number())) {
        bytes += f.size();
      }
    }
    return bytes;
  }

  private static Set<Long> numbers(ShardSnapshot... snapshots) {
    Set<Long> numbers = new HashSet<>();
    for (ShardSnapshot s : snapshots) {
      for (SnapshotFile f : s.files()) {
        numbers.add(f.number());
      }
    }
    return numbers;
  }

  @Test
  void aRefreshReadsOnlyTheFilesTheNewSnapshotAdded() throws Exception {
    try (S3ProxyServer server = S3ProxyServer.start(tmp.resolve("s3"), "vol");
        Storage s3 = S3Volumes.open(server, "vol/snapshots")) {
      CountingStorage volume = new CountingStorage(s3);
      SnapshotStore store = new SnapshotStore(volume);
      try (Db db = Db.open(tmp.resolve("a"), config("all"));
          SnapshotManager snapshots = SnapshotManager.open(db, volume, "a")) {
        GlobalSnapshotCoordinator coordinator = new GlobalSnapshotCoordinator(volume, BUCKETS, 0);
        for (int i = 0; i < KEYS; i++) {
          db.put(i % BUCKETS, "default", key(i), 0, value(i, 1));
        }
        db.compactAll();
        long first = snapshots.snapshot().published().join().id();
        coordinator.commit(List.of(ShardRef.of("a", first)));
        ShardSnapshot firstFiles = store.require("a", first);
        assertTrue(firstFiles.files().size() > 3, "several tables: " + firstFiles.files());

        try (Reader reader = Reader.open(volume, config("all"))) {
          readAll(reader, 0);
          long afterFirstRead = volume.bytesRead.get();
          readAll(reader, 0);
          assertEquals(
              afterFirstRead, volume.bytesRead.get(), "a second pass reads only kept blocks");

          // The writer updates a few keys: the next snapshot adds one small table.
          for (int i = 0; i < 20; i++) {
            db.put(i % BUCKETS, "default", key(i), 0, value(i, 2));
          }
          long second = snapshots.snapshot().published().join().id();
          coordinator.commit(List.of(ShardRef.of("a", second)));
          ShardSnapshot secondFiles = store.require("a", second);
          long added = bytesOfFilesNotIn(secondFiles, firstFiles);
          assertTrue(added > 0 && added < firstFiles.dataBytes() / 4, "one small new table");

          long beforeRefresh = volume.bytesRead.get();
          assertTrue(reader.refresh());
          readAll(reader, 20);
          long read = volume.bytesRead.get() - beforeRefresh;
          assertTrue(
              read <= added + 8192,
              "after the refresh "
                  + read
                  + " bytes were read, the new table has "
                  + added
                  + " and the unchanged ones "
                  + (secondFiles.dataBytes() - added));

          // A compaction rewrites the tables. The shard the refresh moved away from closes at the
          // following refresh, and with it the tables only it still used.
          db.compactAll();
          long third = snapshots.snapshot().published().join().id();
          coordinator.commit(List.of(ShardRef.of("a", third)));
          ShardSnapshot thirdFiles = store.require("a", third);
          assertTrue(reader.refresh());
          readAll(reader, 20);
          assertEquals(numbers(secondFiles, thirdFiles).size(), reader.openTables());
          assertFalse(reader.refresh(), "no newer snapshot; the retired shard closes");
          assertEquals(numbers(thirdFiles).size(), reader.openTables());
          readAll(reader, 20);
        }
      }
    }
  }
}
