package io.cobble.benchmarks.snapshot;

import io.cobble.Config;
import io.cobble.Db;
import io.cobble.snapshot.ShardSnapshot;
import io.cobble.snapshot.SnapshotFile;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.snapshot.SnapshotRestore;
import io.cobble.storage.file.FileStorage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

/**
 * Measures restore from a shard snapshot on a local shared volume (files used in place) against
 * copying the snapshot's files, for a DB of about {@code sizeMb} (default 1024). Bytes read are the
 * process's {@code rchar} from /proc/self/io (every read syscall, page cache or not), so they
 * include the table footers and indexes the restored Db opens.
 *
 * <p>Run: {@code java -cp benchmarks.jar io.cobble.benchmarks.snapshot.RestoreMeasurement DIR
 * [sizeMb]}
 */
public final class RestoreMeasurement {
  private RestoreMeasurement() {}

  public static void main(String[] args) throws Exception {
    Path root = Path.of(args[0]);
    long sizeMb = args.length > 1 ? Long.parseLong(args[1]) : 1024;
    Config config =
        Config.builder()
            .set("total-buckets", 128)
            .set("memtable.capacity", "64mb")
            .set("value-separation.threshold", "4kb")
            .build();
    int valueSize = 1000;
    long keys = sizeMb * 1024 * 1024 / (valueSize + 24);
    Random random = new Random(1);
    byte[] value = new byte[valueSize];
    long t0 = System.nanoTime();
    try (FileStorage volume = FileStorage.open(root.resolve("volume"), true)) {
      ShardSnapshot snapshot;
      try (Db db = Db.open(root.resolve("writer"), config);
          SnapshotManager snaps = SnapshotManager.open(db, volume, "bench")) {
        for (long i = 0; i < keys; i++) {
          random.nextBytes(value);
          db.put((int) (i % 128), "default", key(i), 0, value);
        }
        db.flush();
        db.waitForCompactions();
        long written = System.nanoTime();
        System.out.printf("load: %d keys in %.1f s%n", keys, (written - t0) / 1e9);
        snapshot = snaps.snapshot().published().join();
        System.out.printf(
            "first snapshot: %d files, %.1f MB uploaded in %.1f s%n",
            snapshot.files().size(),
            snaps.bytesUploaded() / 1048576.0,
            (System.nanoTime() - written) / 1e9);
      }

      long readBefore = rchar();
      long start = System.nanoTime();
      long restoreNanos;
      long restoreRead;
      try (Db db = SnapshotRestore.resume(root.resolve("restored"), volume, "bench", config)) {
        restoreNanos = System.nanoTime() - start;
        restoreRead = rchar() - readBefore;
        byte[][] row = db.get(7, "default", key(7));
        if (row == null) {
          throw new IllegalStateException("restored Db lacks key 7");
        }
      }
      System.out.printf(
          "restore in place: %.3f s, %.2f MB read (DB %.1f MB)%n",
          restoreNanos / 1e9, restoreRead / 1048576.0, snapshot.dataBytes() / 1048576.0);

      Path copy = Files.createDirectories(root.resolve("copy"));
      readBefore = rchar();
      start = System.nanoTime();
      for (SnapshotFile f : snapshot.files()) {
        Path target = copy.resolve(f.localName());
        Files.copy(root.resolve("volume").resolve(f.volumePath()), target);
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(target)) {
          ch.force(true);
        }
      }
      long copyNanos = System.nanoTime() - start;
      long copyRead = rchar() - readBefore;
      System.out.printf(
          "copy baseline: %.3f s, %.2f MB read by read syscalls (Files.copy may use"
              + " copy_file_range/sendfile, which rchar does not count; the copy moves %.1f MB)%n",
          copyNanos / 1e9, copyRead / 1048576.0, snapshot.dataBytes() / 1048576.0);
      System.out.printf("ratio copy/restore time: %.0fx%n", copyNanos / (double) restoreNanos);
    }
  }

  private static byte[] key(long i) {
    return String.format("user%012d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static long rchar() throws Exception {
    List<String> lines = Files.readAllLines(Path.of("/proc/self/io"));
    for (String l : lines) {
      if (l.startsWith("rchar:")) {
        return Long.parseLong(l.substring(6).trim());
      }
    }
    throw new IllegalStateException("no rchar in /proc/self/io");
  }
}
