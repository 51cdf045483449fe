package io.cobble.snapshot;

import static io.cobble.snapshot.SnapshotTest.BUCKETS;
import static io.cobble.snapshot.SnapshotTest.check;
import static io.cobble.snapshot.SnapshotTest.key;
import static io.cobble.snapshot.SnapshotTest.value;
import static io.cobble.snapshot.SnapshotTest.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.Config;
import io.cobble.CorruptionException;
import io.cobble.Db;
import io.cobble.reader.ReadOnlyDb;
import io.cobble.storage.StorageOptions;
import io.cobble.storage.Volume;
import io.cobble.storage.VolumeKind;
import io.cobble.storage.VolumeSet;
import io.cobble.storage.s3.S3Volumes;
import io.cobble.testing.S3ProxyServer;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumSet;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restore, open-from-snapshot and read-only opens from an S3 snapshot volume (S3Proxy with
 * signature authentication) use the files where they lie: what is read at open is metadata, data
 * blocks come later on demand, and nothing is downloaded into the working directory.
 */
class S3InPlaceRestoreTest {
  private static final int KEYS = 20_000;

  @TempDir Path tmp;
  private S3ProxyServer server;
  private CountingStorage volume;

  static Config config() {
    return Config.builder()
        .set("total-buckets", BUCKETS)
        .set("memtable.capacity", "1mb")
        .set("sst.target-file-size", "1mb")
        .set("value-separation.threshold", "200")
        .build();
  }

  @BeforeEach
  void start() throws Exception {
    server = S3ProxyServer.start(tmp.resolve("s3"), "vol");
    volume = new CountingStorage(S3Volumes.open(server, "vol/snapshots"));
  }

  @AfterEach
  void stop() throws Exception {
    volume.close();
    server.close();
  }

  /** Writes the source shard, snapshots it to S3 and returns the snapshot. */
  private ShardSnapshot source() {
    try (Db db = Db.open(tmp.resolve("source"), config());
        SnapshotManager snaps = SnapshotManager.open(db, volume, "source")) {
      write(db, 0, KEYS, 1);
      db.compactAll();
      return snaps.snapshot().published().join();
    }
  }

  private static List<String> dataFilesIn(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".sst") || n.endsWith(".vlog"))
          .collect(Collectors.toList());
    }
  }

  @Test
  void resumeReadsMetadataAtOpenAndDataOnDemand() throws Exception {
    ShardSnapshot s = source();
    long data = s.dataBytes();
    Path work = tmp.resolve("work");
    long before = volume.bytesRead.get();
    try (Db db = SnapshotRestore.resume(work, volume, "source", config())) {
      long atOpen = volume.bytesRead.get() - before;
      System.out.printf(
          "resume from S3: %d files, %d data bytes, %d bytes read at open (%.2f%%)%n",
          s.files().size(), data, atOpen, 100.0 * atOpen / data);
      assertTrue(atOpen < data / 10, "read " + atOpen + " of " + data + " bytes at open");
      assertEquals(List.of(), dataFilesIn(work), "nothing downloaded");
      check(db, 0, KEYS, 1);
      assertTrue(volume.bytesRead.get() - before > data / 2, "blocks were read from S3");

      // The restored shard works on its remote files: writes, compaction reading them, and a
      // snapshot that references them instead of uploading them again.
      write(db, 0, 2000, 2);
      db.compactAll();
      check(db, 0, 2000, 2);
      check(db, 2000, KEYS, 1);
      try (SnapshotManager snaps = SnapshotManager.open(db, volume, "source")) {
        ShardSnapshot next = snaps.snapshot().published().join();
        assertTrue(
            snaps.bytesUploaded() < next.dataBytes(),
            "uploaded " + snaps.bytesUploaded() + " of " + next.dataBytes());
      }
    }
    IllegalArgumentException noVolume =
        assertThrows(IllegalArgumentException.class, () -> Db.open(work, config()));
    assertTrue(
        noVolume.getMessage().contains("reads its files in place on s3://vol/snapshots"),
        noVolume.getMessage());
    try (Db db = Db.open(work, config(), volume)) {
      check(db, 0, 2000, 2);
      check(db, 2000, KEYS, 1);
    }
    // Over a volume set the Db opens the S3 volume itself, with the options configured for it.
    VolumeSet volumes =
        VolumeSet.of(
            List.of(
                Volume.of(work.toString(), VolumeKind.PRIMARY_HIGH, VolumeKind.META),
                Volume.of(
                    "s3://vol/snapshots/",
                    EnumSet.of(VolumeKind.SNAPSHOT),
                    StorageOptions.of(server.clientOptions()))));
    try (Db db = Db.open(volumes, config())) {
      check(db, 0, 2000, 2);
      check(db, 2000, KEYS, 1);
    }
  }

  @Test
  void readOnlyAndNewIdentityOpensReadOnlyMetadata() throws Exception {
    ShardSnapshot s = source();
    long data = s.dataBytes();
    long before = volume.bytesRead.get();
    try (ReadOnlyDb ro = ReadOnlyDb.open(volume, "source", s.id(), config())) {
      long atOpen = volume.bytesRead.get() - before;
      assertTrue(atOpen < data / 10, "read " + atOpen + " of " + data + " bytes at open");
      for (int i = 0; i < KEYS; i += 97) {
        assertArrayEquals(value(i, 1), ro.get(i % BUCKETS, "default", key(i))[0], "key " + i);
      }
    }
    before = volume.bytesRead.get();
    try (Db db =
        SnapshotRestore.openFromSnapshot(
            tmp.resolve("copy"),
            volume,
            "source",
            s.id(),
            "copy",
            // Without the background rewrite of the files' buckets 4-7, which would read them.
            Config.builder()
                .setAll(config().values())
                .set("bucket-ranges", "0-3")
                .set("compaction.foreign-bucket-cleanup", false)
                .build())) {
      long atOpen = volume.bytesRead.get() - before;
      assertTrue(atOpen < data / 10, "read " + atOpen + " of " + data + " bytes at open");
      for (int i = 0; i < KEYS; i += 31) {
        if (i % BUCKETS <= 3) {
          assertArrayEquals(value(i, 1), db.get(i % BUCKETS, "default", key(i))[0], "key " + i);
        }
      }
      assertEquals(List.of(), dataFilesIn(tmp.resolve("copy")), "nothing downloaded");
    }
  }

  @Test
  void damagedRemoteBlockIsACorruptionNamingTheObject() throws Exception {
    ShardSnapshot s = source();
    SnapshotFile table = s.files().stream().filter(f -> !f.isVlog()).findFirst().orElseThrow();
    // S3Proxy's file-system store keeps each object as a file: damage the first data block.
    Path blob = tmp.resolve("s3").resolve("vol").resolve("snapshots").resolve(table.volumePath());
    try (FileChannel ch =
        FileChannel.open(blob, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, 20);
      b.put(0, (byte) (b.get(0) ^ 0x5a)).rewind();
      ch.write(b, 20);
    }
    try (ReadOnlyDb ro = ReadOnlyDb.open(volume, "source", s.id(), config())) {
      CorruptionException e =
          assertThrows(
              CorruptionException.class,
              () -> {
                for (int i = 0; i < KEYS; i++) {
                  ro.get(i % BUCKETS, "default", key(i));
                }
              });
      assertEquals("s3://vol/snapshots/" + table.volumePath(), e.file());
    }
  }
}
