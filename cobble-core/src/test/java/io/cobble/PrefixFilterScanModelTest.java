package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.merge.ListCodec;
import io.cobble.schema.ColumnSpec;
import io.cobble.util.Bytes;
import io.cobble.version.FileMeta;
import io.cobble.version.Version;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prefix scans over a family whose tables carry a prefix filter ({@link Db#prefixFilter}) return
 * exactly what a plain {@link TreeMap} model holds: random puts (some with a TTL), column and row
 * deletes and list merges on 4-byte-prefixed keys (and a few keys shorter than a prefix) land
 * across memtables, level-0 files and compacted levels while the clock moves, and after every step
 * whole prefix scans, resumed ones, other ranges and {@link Db#isEmpty} are checked. The seed is
 * printed; replay one with {@code -Dcobble.prefix-filter.seed=<seed>}.
 */
class PrefixFilterScanModelTest {
  private static final String FAMILY = "m";
  private static final int PREFIXES = 16;
  private static final int SUFFIXES = 6;

  @TempDir Path dir;

  /** One row of the model: column 0 with its expiry (0 = none), column 1 a list. */
  private static final class Entry {
    byte[] v;
    long vExpiry;
    List<String> l = new ArrayList<>();

    boolean live(long now) {
      return value(now) != null || !l.isEmpty();
    }

    byte[] value(long now) {
      return v != null && (vExpiry == 0 || now < vExpiry) ? v : null;
    }
  }

  private static Config config(ManualClock clock) {
    return Config.builder()
        .set("total-buckets", 2)
        .set("memtable.capacity", "16kb")
        .set("sst.target-file-size", "4kb")
        .set("sst.block-size", "512b")
        .set("compaction.level-base-size", "16kb")
        .set("compaction.threads", 1)
        .set("fsync.enabled", false)
        .clock(clock)
        .build();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  private static String prefix(int p) {
    return String.format("p%02d/", p);
  }

  private static String key(Random random) {
    int p = random.nextInt(PREFIXES);
    // A few keys are shorter than a prefix: the filter leaves them out, no prefix scan sees them.
    return random.nextInt(20) == 0
        ? String.format("p%02d", p)
        : prefix(p) + random.nextInt(SUFFIXES);
  }

  @Test
  void prefixScansMatchTheModelAcrossFlushesCompactionsDeletesAndMerges() {
    long seed = Long.getLong("cobble.prefix-filter.seed", System.nanoTime());
    System.out.println("PrefixFilterScanModelTest seed=" + seed);
    Random random = new Random(seed);
    ManualClock clock = new ManualClock(1_000_000);
    List<TreeMap<String, Entry>> model = Arrays.asList(new TreeMap<>(), new TreeMap<>());
    try (Db db = Db.open(dir, config(clock))) {
      db.createFamily(
          FAMILY, Arrays.asList(ColumnSpec.of("v"), ColumnSpec.merging("l", "list_append")));
      db.prefixFilter(FAMILY, 4);
      int checks = 0;
      for (int step = 0; step < 3_000; step++) {
        int bucket = random.nextInt(2);
        String k = key(random);
        byte[] kb = bytes(k);
        TreeMap<String, Entry> m = model.get(bucket);
        int op = random.nextInt(100);
        String pad = "x".repeat(random.nextInt(4) == 0 ? 40 : 4);
        if (op < 35) {
          byte[] v = bytes("v" + step + pad);
          db.put(bucket, FAMILY, kb, 0, v);
          Entry e = m.computeIfAbsent(k, x -> new Entry());
          e.v = v;
          e.vExpiry = 0;
        } else if (op < 43) {
          long ttl = 1 + random.nextInt(300);
          byte[] v = bytes("t" + step);
          db.put(bucket, FAMILY, kb, 0, v, ttl);
          Entry e = m.computeIfAbsent(k, x -> new Entry());
          e.v = v;
          e.vExpiry = clock.nowMillis() + ttl;
        } else if (op < 55) {
          String el = "l" + step;
          db.merge(bucket, FAMILY, kb, 1, ListCodec.element(bytes(el)));
          m.computeIfAbsent(k, x -> new Entry()).l.add(el);
        } else if (op < 65) {
          int column = random.nextInt(2);
          db.delete(bucket, FAMILY, kb, column);
          Entry e = m.get(k);
          if (e != null) {
            if (column == 0) {
              e.v = null;
            } else {
              e.l.clear();
            }
          }
        } else if (op < 80) {
          db.deleteRow(bucket, FAMILY, kb);
          m.remove(k);
        } else if (op < 85) {
          db.flush();
        } else if (op < 87) {
          db.compactAll();
        } else {
          clock.advance(random.nextInt(100));
        }
        for (int q = 0; q < 3; q++) {
          int b = random.nextInt(2);
          String p = prefix(random.nextInt(PREFIXES));
          String from = q == 1 ? p + random.nextInt(SUFFIXES) : null;
          String where = "seed=" + seed + " step=" + step + " bucket=" + b + " prefix=" + p;
          check(db, model.get(b), b, p, from, clock.nowMillis(), where);
          checks++;
        }
      }
      assertEquals(9_000, checks);
      db.flush();
      db.compactAll();
      assertTablesCarryTheFilter(db);
      for (int b = 0; b < 2; b++) {
        for (int p = 0; p < PREFIXES; p++) {
          check(db, model.get(b), b, prefix(p), null, clock.nowMillis(), "settled, seed=" + seed);
        }
      }
    }
  }

  /**
   * A scan of {@code p} (resumed after {@code from} when set) and {@code isEmpty} against the
   * model.
   */
  private static void check(
      Db db, TreeMap<String, Entry> m, int b, String p, String from, long now, String where) {
    byte[] start = bytes(p);
    byte[] end = Bytes.successor(start);
    ScanOptions options = ScanOptions.defaults();
    if (from != null) {
      options = options.startAfter(bytes(from));
    }
    List<String> expected = new ArrayList<>();
    Map<String, Entry> range =
        from == null
            ? m.subMap(p, true, new String(end, UTF_8), false)
            : m.subMap(from, false, new String(end, UTF_8), false);
    for (Map.Entry<String, Entry> e : range.entrySet()) {
      if (e.getValue().live(now)) {
        expected.add(e.getKey());
      }
    }
    // Read as an iterator of rows, then in place (ScanCursor.advance): the same rows either way.
    for (boolean inPlace : new boolean[] {false, true}) {
      checkRows(
          db,
          m,
          b,
          start,
          end,
          options,
          now,
          expected,
          where + " from=" + from + (inPlace ? " in place" : ""),
          inPlace);
    }
    if (from == null) {
      assertEquals(expected.isEmpty(), db.isEmpty(b, FAMILY, start, end), where + " isEmpty");
    }
  }

  private static void checkRows(
      Db db,
      TreeMap<String, Entry> m,
      int b,
      byte[] start,
      byte[] end,
      ScanOptions options,
      long now,
      List<String> expected,
      String where,
      boolean inPlace) {
    List<String> actual = new ArrayList<>();
    try (ScanCursor c = db.scan(b, FAMILY, start, end, options)) {
      while (inPlace ? c.advance() : c.hasNext()) {
        Row row = inPlace ? ModelBasedTest.copyInPlace(c, 2) : c.next();
        String key = new String(row.key(), UTF_8);
        actual.add(key);
        Entry e = m.get(key);
        if (e == null) {
          continue;
        }
        byte[] v = e.value(now);
        if (v == null) {
          assertNull(row.column(0), where + " key=" + key);
        } else {
          assertArrayEquals(v, row.column(0), where + " key=" + key);
        }
        List<String> list = new ArrayList<>();
        if (row.column(1) != null) {
          for (byte[] el : ListCodec.decode(row.column(1))) {
            list.add(new String(el, UTF_8));
          }
        }
        assertEquals(e.l, list, where + " key=" + key);
      }
    }
    assertEquals(expected, actual, where);
  }

  /** The engine wrote its tables with the filter, and the filter rules prefixes out. */
  private static void assertTablesCarryTheFilter(Db db) {
    Version v = db.versionSet().acquire();
    try {
      List<FileMeta> files = new ArrayList<>();
      for (io.cobble.version.Tree t : v.trees()) {
        files.addAll(t.allFiles());
      }
      assertFalse(files.isEmpty(), "tables after the final compaction");
      for (FileMeta f : files) {
        assertEquals(6, f.table().prefixFilterLength(), "bucket bytes + 4: " + f.table().name());
      }
      // Each file holds a slice of the key space: the filter alone rules some prefixes out.
      int ruledOut = 0;
      for (FileMeta f : files) {
        for (int b = 0; b < 2; b++) {
          for (int p = 0; p < PREFIXES; p++) {
            byte[] prefix = bytes(prefix(p));
            byte[] lo = new io.cobble.read.ScanBounds().lo(b, prefix, prefix.length);
            if (!f.table().mayHoldRange(lo, Bytes.successor(lo))) {
              ruledOut++;
            }
          }
        }
      }
      assertTrue(ruledOut > 0, "no prefix ruled out by any of " + files.size() + " tables");
    } finally {
      v.unref();
    }
  }

  /**
   * A memtable records a family's prefix length at the family's first row in it: rows written
   * before {@link Db#prefixFilter} is set, and rows of a second family that has none, stay visible
   * to prefix scans while they sit in that memtable, and scans of a family with no row in the
   * memtable still see its tables.
   */
  @Test
  void prefixScansSeeMemtableRowsWrittenBeforeTheFilterWasSet() {
    try (Db db = Db.open(dir, config(new ManualClock(0)))) {
      db.createFamily(FAMILY, Arrays.asList(ColumnSpec.of("v")));
      db.createFamily("other", Arrays.asList(ColumnSpec.of("v")));
      db.put(0, "other", bytes(prefix(1) + 0), 0, bytes("flushed"));
      db.flush();
      for (int p = 0; p < PREFIXES; p += 2) {
        db.put(0, FAMILY, bytes(prefix(p) + 0), 0, bytes("before"));
      }
      db.prefixFilter(FAMILY, 4);
      db.prefixFilter("other", 4);
      for (int p = 1; p < PREFIXES; p += 2) {
        db.put(0, FAMILY, bytes(prefix(p) + 0), 0, bytes("after"));
      }
      for (int p = 0; p < PREFIXES; p++) {
        byte[] start = bytes(prefix(p));
        List<String> keys = new ArrayList<>();
        try (ScanCursor c =
            db.scan(0, FAMILY, start, Bytes.successor(start), ScanOptions.defaults())) {
          while (c.hasNext()) {
            keys.add(new String(c.next().key(), UTF_8));
          }
        }
        assertEquals(Arrays.asList(prefix(p) + 0), keys, "prefix " + p);
        assertFalse(db.isEmpty(0, FAMILY, start, Bytes.successor(start)), "prefix " + p);
      }
      byte[] other = bytes(prefix(1));
      try (ScanCursor c =
          db.scan(0, "other", other, Bytes.successor(other), ScanOptions.defaults())) {
        assertTrue(c.hasNext(), "the other family's flushed row");
      }
    }
  }

  @Test
  void prefixFilterLengthIsValidatedAndNamesTheFamily() {
    try (Db db = Db.open(dir, config(new ManualClock(0)))) {
      db.createFamily(FAMILY, Arrays.asList(ColumnSpec.of("v")));
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> db.prefixFilter(FAMILY, -1));
      assertTrue(e.getMessage().contains("family " + FAMILY), e.getMessage());
    }
  }
}
