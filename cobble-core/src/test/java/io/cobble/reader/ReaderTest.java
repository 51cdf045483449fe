package io.cobble.reader;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.Row;
import io.cobble.snapshot.GlobalSnapshotCoordinator;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.storage.Storage;
import io.cobble.storage.file.FileStorage;
import io.cobble.storage.s3.S3Volumes;
import io.cobble.testing.S3ProxyServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReaderTest {
  static final int BUCKETS = 8;
  static final int KEYS = 2000;

  @TempDir Path tmp;

  static Config config(String ranges) {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("bucket-ranges", ranges)
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "32kb")
        .set("value-separation.threshold", "200")
        .build();
  }

  static byte[] key(int i) {
    return String.format("key-%06d", i).getBytes(UTF_8);
  }

  static byte[] value(int i, int gen) {
    String v = "g" + gen + "-" + i;
    return (i % 13 == 0 ? v.repeat(30) : v).getBytes(UTF_8);
  }

  static void write(Db db, int gen) {
    for (int i = 0; i < KEYS; i++) {
      if (db.config().ownsBucket(i % BUCKETS)) {
        db.put(i % BUCKETS, "default", key(i), 0, value(i, gen));
      }
    }
  }

  @Test
  void readOnlyDbAndReaderFollowSnapshotsNotTheWriterOnALocalVolume() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true)) {
      readOnlyDbAndReaderFollowSnapshotsNotTheWriter(volume);
    }
  }

  /** The same on S3 (S3Proxy): shards are read in place with ranged reads. */
  @Test
  void readOnlyDbAndReaderFollowSnapshotsNotTheWriterOnS3() throws Exception {
    try (S3ProxyServer server = S3ProxyServer.start(tmp.resolve("s3"), "vol")) {
      try (Storage volume = S3Volumes.open(server, "vol/snapshots")) {
        readOnlyDbAndReaderFollowSnapshotsNotTheWriter(volume);
      }
    }
  }

  private void readOnlyDbAndReaderFollowSnapshotsNotTheWriter(Storage volume) throws Exception {
    try (Db a = Db.open(tmp.resolve("a"), config("0-3"));
        Db b = Db.open(tmp.resolve("b"), config("4-7"));
        SnapshotManager sa = SnapshotManager.open(a, volume, "a");
        SnapshotManager sb = SnapshotManager.open(b, volume, "b")) {
      GlobalSnapshotCoordinator coordinator = new GlobalSnapshotCoordinator(volume, BUCKETS, 0);
      write(a, 1);
      write(b, 1);
      long a1 = sa.snapshot().published().join().id();
      long b1 = sb.snapshot().published().join().id();
      long g1 = coordinator.commit(List.of(ShardRef.of("a", a1), ShardRef.of("b", b1))).id();
      write(a, 2); // after the snapshot: invisible to readers

      try (ReadOnlyDb ro = ReadOnlyDb.openLatest(volume, "a", config("all"))) {
        assertArrayEquals(value(0, 1), ro.get(0, "default", key(0))[0]);
        assertThrows(IllegalArgumentException.class, () -> ro.get(4, "default", key(4)));
      }

      try (Reader current = Reader.open(volume, config("all"));
          Reader fixed = Reader.open(volume, g1, config("all"))) {
        assertEquals(0, current.openShards(), "shards open lazily");
        assertArrayEquals(value(0, 1), current.get(0, "default", key(0))[0]);
        assertEquals(1, current.openShards());
        for (int i = 0; i < KEYS; i++) {
          assertArrayEquals(value(i, 1), current.get(i % BUCKETS, "default", key(i))[0]);
        }
        assertEquals(2, current.openShards());
        assertTrue(current.cache().usage() > 0, "both shards fill the one shared cache");
        assertNull(current.get(3, "default", key(99999)));

        // Writers move on; the coordinator publishes a new global snapshot.
        write(b, 2);
        long a2 = sa.snapshot().published().join().id();
        long b2 = sb.snapshot().published().join().id();
        coordinator.commit(List.of(ShardRef.of("a", a2), ShardRef.of("b", b2)));
        assertTrue(current.refresh());
        assertFalse(current.refresh());
        assertFalse(fixed.refresh());
        for (int i = 0; i < KEYS; i++) {
          assertArrayEquals(value(i, 2), current.get(i % BUCKETS, "default", key(i))[0]);
          assertArrayEquals(value(i, 1), fixed.get(i % BUCKETS, "default", key(i))[0]);
        }
      }

      // Splits: scan half of each split, serialise what remains, finish in another reader.
      Set<String> seen = new TreeSet<>();
      List<byte[]> remaining = new ArrayList<>();
      try (Reader reader = Reader.open(volume, g1, config("all"))) {
        List<ScanSplit> splits = reader.splits("default");
        assertEquals(2, splits.size());
        for (ScanSplit split : splits) {
          try (SplitScanner s = reader.scan(ScanSplit.fromBytes(split.toBytes()))) {
            for (int n = 0; n < KEYS / 4 && s.hasNext(); n++) {
              Row r = s.next();
              assertTrue(seen.add(s.bucket() + "/" + new String(r.key(), UTF_8)), "no duplicates");
            }
            remaining.add(s.remaining().toBytes());
          }
        }
      }
      try (Reader reader = Reader.open(volume, g1, config("all"))) {
        for (byte[] bytes : remaining) {
          try (SplitScanner s = reader.scan(ScanSplit.fromBytes(bytes))) {
            while (s.hasNext()) {
              Row r = s.next();
              String k = new String(r.key(), UTF_8);
              assertTrue(seen.add(s.bucket() + "/" + k), "no duplicates: " + k);
              int i = Integer.parseInt(k.substring(4));
              assertArrayEquals(value(i, 1), r.column(0));
            }
          }
        }
      }
      assertEquals(KEYS, seen.size());
    }
  }
}
