package io.cobble.reader;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.cobble.Db;
import io.cobble.Row;
import io.cobble.schema.ColumnSpec;
import io.cobble.snapshot.GlobalSnapshotCoordinator;
import io.cobble.snapshot.ShardRef;
import io.cobble.snapshot.SnapshotManager;
import io.cobble.storage.file.FileStorage;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Projected point reads and split scans of a {@link Reader}: only the requested columns come back,
 * in the requested order, and a shard written before a column was appended reads it as absent.
 */
class ReaderProjectionTest {

  @TempDir Path tmp;

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  @Test
  void projectionsReturnTheRequestedColumnsAndTolerateShardsWithoutAppendedOnes() throws Exception {
    try (FileStorage volume = FileStorage.open(tmp.resolve("volume"), true);
        Db old = Db.open(tmp.resolve("old"), ReaderTest.config("0-3"));
        Db wide = Db.open(tmp.resolve("wide"), ReaderTest.config("4-7"));
        SnapshotManager oldSnapshots = SnapshotManager.open(old, volume, "old");
        SnapshotManager wideSnapshots = SnapshotManager.open(wide, volume, "wide")) {
      wide.addColumn("default", ColumnSpec.of("extra"));
      for (int i = 0; i < 40; i++) {
        int bucket = i % ReaderTest.BUCKETS;
        byte[] key = ReaderTest.key(i);
        if (bucket < 4) {
          old.put(bucket, "default", key, 0, bytes("v" + i));
        } else {
          wide.put(bucket, "default", key, 0, bytes("v" + i));
          wide.put(bucket, "default", key, 1, bytes("x" + i));
        }
      }
      long a = oldSnapshots.snapshot().published().join().id();
      long b = wideSnapshots.snapshot().published().join().id();
      new GlobalSnapshotCoordinator(volume, ReaderTest.BUCKETS, 0)
          .commit(List.of(ShardRef.of("old", a), ShardRef.of("wide", b)));

      try (Reader reader = Reader.open(volume, ReaderTest.config("all"))) {
        for (int i = 0; i < 40; i++) {
          int bucket = i % ReaderTest.BUCKETS;
          byte[] key = ReaderTest.key(i);
          byte[][] both = reader.get(bucket, "default", key, new int[] {1, 0});
          assertEquals(2, both.length);
          assertArrayEquals(bytes("v" + i), both[1]);
          byte[][] extra = reader.get(bucket, "default", key, new int[] {1});
          if (bucket < 4) {
            assertNull(both[0], "the old shard has no column 1");
            assertNull(extra, "no requested column in the old shard: no row");
          } else {
            assertArrayEquals(bytes("x" + i), both[0]);
            assertArrayEquals(bytes("x" + i), extra[0]);
          }
        }
        int rows = 0;
        int withExtra = 0;
        for (ScanSplit split : reader.splits("default")) {
          try (SplitScanner scan = reader.scan(split, new int[] {1, 0})) {
            while (scan.hasNext()) {
              Row row = scan.next();
              int i = Integer.parseInt(new String(row.key(), UTF_8).substring(4));
              assertEquals(2, row.columns().length);
              assertArrayEquals(bytes("v" + i), row.column(1));
              assertArrayEquals(scan.bucket() < 4 ? null : bytes("x" + i), row.column(0));
              rows++;
            }
          }
          try (SplitScanner scan = reader.scan(split, new int[] {1})) {
            while (scan.hasNext()) {
              assertEquals(1, scan.next().columns().length);
              withExtra++;
            }
          }
        }
        assertEquals(40, rows);
        assertEquals(20, withExtra, "only the wide shard's rows have column 1");
      }
    }
  }
}
