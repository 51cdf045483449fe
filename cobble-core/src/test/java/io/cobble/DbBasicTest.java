package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.merge.ListCodec;
import io.cobble.merge.U64AddOperator;
import io.cobble.schema.ColumnSpec;
import io.cobble.version.Manifest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DbBasicTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static Config small() {
    return Config.builder()
        .set("memtable.capacity", "64kb")
        .set("sst.target-file-size", "32kb")
        .set("compaction.level-base-size", "64kb")
        .set("value-separation.threshold", "100")
        .build();
  }

  @Test
  void putGetDeleteAcrossFlushAndReopen() {
    try (SingleDb db = SingleDb.open(dir, small())) {
      db.put(b("a"), b("1"));
      db.put(b("b"), b("2"));
      assertArrayEquals(b("1"), db.get(b("a")));
      db.flush();
      db.delete(b("a"));
      assertNull(db.get(b("a")));
      assertArrayEquals(b("2"), db.get(b("b")));
      db.flush();
      db.db().compactAll();
      assertNull(db.get(b("a")));
      assertArrayEquals(b("2"), db.get(b("b")));
    }
    try (SingleDb db = SingleDb.open(dir, small())) {
      assertNull(db.get(b("a")));
      assertArrayEquals(b("2"), db.get(b("b")));
    }
  }

  @Test
  void manyKeysWithLargeValuesFlushCompactAndScan() {
    int n = 5000;
    try (SingleDb db = SingleDb.open(dir, small())) {
      for (int i = 0; i < n; i++) {
        byte[] v = new byte[i % 7 == 0 ? 300 : 20];
        Arrays.fill(v, (byte) i);
        db.put(b(String.format("k%06d", i)), v);
      }
      db.flush();
      db.db().waitForCompactions();
      for (int i = 0; i < n; i += 37) {
        byte[] v = db.get(b(String.format("k%06d", i)));
        assertEquals(i % 7 == 0 ? 300 : 20, v.length, "key " + i);
        assertEquals((byte) i, v[0]);
      }
      int count = 0;
      try (SingleDb.Cursor c = db.scan(b("k001000"), b("k002000"))) {
        while (c.hasNext()) {
          c.next();
          count++;
        }
      }
      assertEquals(1000, count);
      DbMetrics m = db.metrics();
      assertTrue(m.flushes() > 1, m.toString());
      assertTrue(m.vlogFiles() > 0, m.toString());
    }
    try (SingleDb db = SingleDb.open(dir, small())) {
      db.db().compactAll();
      for (int i = 0; i < n; i += 13) {
        byte[] v = db.get(b(String.format("k%06d", i)));
        assertEquals(i % 7 == 0 ? 300 : 20, v.length, "key " + i);
      }
    }
  }

  @Test
  void columnsMergeAndProjection() {
    try (Db db = Db.open(dir, small().toBuilder().set("total-buckets", 16).build())) {
      List<ColumnSpec> cols = new ArrayList<>();
      cols.add(ColumnSpec.of("name"));
      cols.add(ColumnSpec.merging("count", "u64_add"));
      cols.add(ColumnSpec.merging("list", "list_append"));
      db.createFamily("users", cols);
      db.put(3, "users", b("u1"), 0, b("ann"));
      db.merge(3, "users", b("u1"), 1, U64AddOperator.encode(5));
      db.flush();
      db.merge(3, "users", b("u1"), 1, U64AddOperator.encode(7));
      db.merge(3, "users", b("u1"), 2, ListCodec.element(b("x")));
      db.flush();
      db.merge(3, "users", b("u1"), 2, ListCodec.element(b("y")));
      byte[][] row = db.get(3, "users", b("u1"));
      assertArrayEquals(b("ann"), row[0]);
      assertEquals(12, U64AddOperator.decode(row[1]));
      assertEquals(2, ListCodec.decode(row[2]).size());
      byte[][] proj = db.get(3, "users", b("u1"), ReadOptions.columns(1));
      assertEquals(1, proj.length);
      assertEquals(12, U64AddOperator.decode(proj[0]));
      assertNull(db.get(4, "users", b("u1")));
      db.compactAll();
      assertEquals(12, U64AddOperator.decode(db.get(3, "users", b("u1"))[1]));
    }
  }

  @Test
  void writersStallWhenFlushesFallBehindAndMetricsAddUp() throws Exception {
    Config config =
        Config.builder()
            .set("memtable.capacity", "4kb")
            .set("memory.memtable-buffer-count", 2)
            .set("compaction.l0-file-limit", 1)
            .set("compaction.write-stall-limit", 3)
            .set("block-cache.size", "1mb")
            .build();
    try (SingleDb db = SingleDb.open(dir, config)) {
      for (int i = 0; i < 20_000; i++) {
        db.put(b(String.format("k%06d", i % 3000)), b("value-" + i));
      }
      db.flush();
      db.db().waitForCompactions();
      for (int i = 17_000; i < 20_000; i++) {
        assertArrayEquals(b("value-" + i), db.get(b(String.format("k%06d", i % 3000))));
      }
      DbMetrics m = db.metrics();
      assertTrue(m.stallWaits() > 0, m.toString());
      assertTrue(m.flushes() > 50 && m.flushBytes() > 0, m.toString());
      assertTrue(m.compactions() > 0 && m.compactionBytesIn() > m.compactionBytesOut() / 10);
      assertTrue(m.cacheHits() > 0 && m.cacheMisses() > 0 && m.cacheUsage() > 0, m.toString());
      // Dead tables the previous (fallback) manifest still lists stay on disk until it is replaced.
      Manifest.Recovered manifests = Manifest.recover(dir);
      java.util.Set<Long> newest = manifests.manifest.fileNumbers();
      long onDisk = 0;
      int files = 0;
      try (java.util.stream.Stream<Path> s = java.nio.file.Files.list(dir)) {
        for (Path p : (Iterable<Path>) s::iterator) {
          String name = p.getFileName().toString();
          if (name.endsWith(".sst")) {
            long number = Long.parseLong(name.substring(0, name.length() - 4));
            if (newest.contains(number)) {
              onDisk += java.nio.file.Files.size(p);
              files++;
            } else {
              assertTrue(manifests.previousFiles.contains(number), name + " is in no manifest");
            }
          }
        }
      }
      assertEquals(files, m.liveFiles());
      assertEquals(onDisk, m.liveBytes());
      int perLevel = 0;
      for (int n : m.filesPerLevel()) {
        perLevel += n;
      }
      assertEquals(files, perLevel);
    }
  }

  @Test
  void hugeValuesAndKeysRoundTripWithAndWithoutSeparation() {
    for (String threshold : new String[] {"0", "1kb"}) {
      Path sub = dir.resolve("t" + threshold);
      Config config =
          Config.builder()
              .set("value-separation.threshold", threshold)
              .set("sst.compression", "lz4")
              .build();
      byte[] bigKey = new byte[100_000];
      Arrays.fill(bigKey, (byte) 'k');
      byte[] bigValue = new byte[5 << 20];
      new java.util.Random(1).nextBytes(bigValue);
      try (SingleDb db = SingleDb.open(sub, config)) {
        db.put(bigKey, bigValue);
        db.put(b("small"), b("v"));
        db.flush();
        db.db().compactAll();
      }
      try (SingleDb db = SingleDb.open(sub, config)) {
        assertArrayEquals(bigValue, db.get(bigKey));
        assertArrayEquals(b("v"), db.get(b("small")));
      }
    }
  }
}
