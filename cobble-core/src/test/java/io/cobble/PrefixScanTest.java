package io.cobble;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import io.cobble.util.Bytes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Per-key prefix scans (the keyed state backend's map and list reads: one key's entries) over a
 * tree whose files hold disjoint key ranges, which is what keys written in order produce, mixed
 * with overwrites, deletes and merges of older keys, so some files overlap. A scan leaves out the
 * level-0 files and levels that hold no key of its range; it must still return exactly the model's
 * rows, with every older version folded in. The random test prints its seed; replay one with {@code
 * -Dcobble.prefix-scan.seed=<seed>}.
 */
class PrefixScanTest {
  private static final String FAMILY = "m";
  private static final int ENTRIES_PER_KEY = 5;

  @TempDir Path dir;

  private static Config config(int l0Limit) {
    return Config.builder()
        .set("memtable.capacity", "16kb")
        .set("sst.target-file-size", "8kb")
        .set("sst.block-size", "1kb")
        .set("compaction.level-base-size", "64kb")
        .set("compaction.l0-file-limit", l0Limit)
        .set("compaction.write-stall-limit", l0Limit + 8)
        .set("compaction.threads", 1)
        .set("fsync.enabled", false)
        .build();
  }

  private static byte[] prefix(int key) {
    return new byte[] {(byte) (key >>> 16), (byte) (key >>> 8), (byte) key};
  }

  private static byte[] entry(int key, int userKey) {
    byte[] p = prefix(key);
    byte[] e = new byte[p.length + 2];
    System.arraycopy(p, 0, e, 0, p.length);
    e[p.length] = (byte) (userKey >>> 8);
    e[p.length + 1] = (byte) userKey;
    return e;
  }

  private static byte[] end(byte[] prefix) {
    return Bytes.successor(prefix);
  }

  @ParameterizedTest(name = "memtable {0}")
  @ValueSource(strings = {"adaptive", "skiplist"})
  void prefixScansMatchTheModel(String memtable) {
    long seed = Long.getLong("cobble.prefix-scan.seed", System.nanoTime());
    System.out.println("PrefixScanTest seed " + seed + " (-Dcobble.prefix-scan.seed=" + seed + ")");
    Random rnd = new Random(seed);
    Config config =
        Config.builder()
            .set("memtable.type", memtable)
            .set("total-buckets", 2)
            .set("memtable.capacity", "16kb")
            .set("sst.target-file-size", "8kb")
            .set("sst.block-size", "1kb")
            .set("compaction.level-base-size", "64kb")
            .set("compaction.l0-file-limit", 2 + rnd.nextInt(6))
            .set("compaction.threads", 1)
            .set("fsync.enabled", false)
            .build();
    // Two columns: the value (put) and a concatenating merge column, as list state uses one.
    List<NavigableMap<byte[], String[]>> model = new ArrayList<>();
    model.add(new TreeMap<>(Bytes::compare));
    model.add(new TreeMap<>(Bytes::compare));
    try (Db db = Db.open(dir, config)) {
      db.createFamily(FAMILY, List.of(ColumnSpec.of("v"), ColumnSpec.merging("l", "concat")));
      int keys = 0;
      for (int round = 0; round < 40; round++) {
        // Mostly new keys in order (disjoint files), then some updates of older ones (overlap).
        int fresh = 20 + rnd.nextInt(60);
        for (int i = 0; i < fresh; i++, keys++) {
          int bucket = rnd.nextInt(2);
          for (int u = 0; u < ENTRIES_PER_KEY; u++) {
            apply(db, model.get(bucket), bucket, entry(keys, u), rnd, true);
          }
        }
        for (int i = rnd.nextInt(20); i > 0; i--) {
          int bucket = rnd.nextInt(2);
          apply(
              db, model.get(bucket), bucket, entry(rnd.nextInt(keys), rnd.nextInt(8)), rnd, false);
        }
        if (rnd.nextInt(3) == 0) {
          db.flush();
        }
        if (rnd.nextInt(8) == 0) {
          db.compactAll();
        }
        for (int s = 0; s < 60; s++) {
          int bucket = rnd.nextInt(2);
          int key = rnd.nextInt(keys + 2);
          check(db, model.get(bucket), bucket, prefix(key), rnd, seed);
        }
      }
      db.waitForCompactions();
      for (int key = 0; key < keys + 2; key++) {
        check(db, model.get(0), 0, prefix(key), rnd, seed);
        check(db, model.get(1), 1, prefix(key), rnd, seed);
      }
    }
  }

  private static void apply(
      Db db, NavigableMap<byte[], String[]> model, int bucket, byte[] k, Random rnd, boolean put) {
    int op = put ? 0 : rnd.nextInt(3);
    String[] row = model.get(k);
    if (op == 0) {
      String v = Integer.toString(rnd.nextInt(1000));
      db.put(bucket, FAMILY, k, 0, v.getBytes());
      row = row == null ? new String[2] : row;
      row[0] = v;
      model.put(k, row);
    } else if (op == 1) {
      String v = Integer.toString(rnd.nextInt(10));
      db.merge(bucket, FAMILY, k, 1, v.getBytes());
      row = row == null ? new String[2] : row;
      row[1] = row[1] == null ? v : row[1] + v;
      model.put(k, row);
    } else {
      db.deleteRow(bucket, FAMILY, k);
      model.remove(k);
    }
  }

  private static String text(byte[] b) {
    return b == null ? null : new String(b);
  }

  private static void check(
      Db db,
      NavigableMap<byte[], String[]> model,
      int bucket,
      byte[] prefix,
      Random rnd,
      long seed) {
    Map<byte[], String[]> expected = model.subMap(prefix, true, end(prefix), false);
    boolean probe = rnd.nextInt(4) == 0;
    ScanOptions options = probe ? ScanOptions.defaults().maxRows(1) : ScanOptions.defaults();
    List<Row> rows = new ArrayList<>();
    try (ScanCursor c = db.scan(bucket, FAMILY, prefix, end(prefix), options)) {
      while (c.hasNext()) {
        rows.add(c.next());
      }
    }
    String where =
        "seed " + seed + " bucket " + bucket + " prefix " + java.util.Arrays.toString(prefix);
    assertEquals(probe ? Math.min(1, expected.size()) : expected.size(), rows.size(), where);
    int i = 0;
    for (Map.Entry<byte[], String[]> e : expected.entrySet()) {
      if (i == rows.size()) {
        break;
      }
      Row row = rows.get(i++);
      assertArrayEquals(e.getKey(), row.key(), where);
      assertEquals(e.getValue()[0], text(row.column(0)), where);
      assertEquals(e.getValue()[1], text(row.column(1)), where);
    }
  }

  /**
   * The pruning itself, seen through the block cache: with many level-0 files of disjoint key
   * ranges, a one-key scan reads the blocks of the one file that holds the key, not a block of
   * every file after it, as a merge that seeks every file does.
   */
  @Test
  void aOneKeyScanReadsOnlyTheFileThatHoldsTheKey() {
    int files = 12;
    try (Db db = Db.open(dir, config(files + 4))) {
      db.createFamily(FAMILY, List.of(ColumnSpec.of("v"), ColumnSpec.merging("l", "concat")));
      int keysPerFile = 50;
      for (int f = 0; f < files; f++) {
        for (int i = 0; i < keysPerFile; i++) {
          for (int u = 0; u < ENTRIES_PER_KEY; u++) {
            db.put(0, FAMILY, entry(f * keysPerFile + i, u), 0, ("v" + u).getBytes());
          }
        }
        db.flush();
      }
      assertEquals(files, db.metrics().filesPerLevel()[0], "level-0 files: " + db.metrics());
      int scans = 200;
      Random rnd = new Random(1);
      long before = db.metrics().cacheHits() + db.metrics().cacheMisses();
      for (int s = 0; s < scans; s++) {
        byte[] p = prefix(rnd.nextInt(files * keysPerFile));
        int rows = 0;
        try (ScanCursor c = db.scan(0, FAMILY, p, end(p), ScanOptions.defaults())) {
          while (c.hasNext()) {
            c.next();
            rows++;
          }
        }
        assertEquals(ENTRIES_PER_KEY, rows);
      }
      long perScan = (db.metrics().cacheHits() + db.metrics().cacheMisses() - before) / scans;
      // Pruned: one file's block, two when the key's entries cross a block boundary. Unpruned,
      // every file above the key costs one more, about half of them on average.
      assertTrue(
          perScan < 3,
          "a one-key scan looked up " + perScan + " blocks over " + files + " level-0 files");
    }
  }
}
