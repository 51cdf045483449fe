package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.merge.ListCodec;
import io.cobble.schema.ColumnSpec;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Db#isEmpty} answers exactly as a scan over the same range: random puts (some with a TTL),
 * column and row deletes, and list merges (one column expires elements) land across memtables,
 * level-0 files and compacted levels while the clock moves, and after every step random ranges,
 * per-prefix ranges included, are asked both ways. The random test prints its seed; replay one with
 * {@code -Dcobble.range-probe.seed=<seed>}.
 */
class RangeProbeModelTest {
  private static final String FAMILY = "m";
  private static final int PREFIXES = 12;
  private static final int SUFFIXES = 6;

  @TempDir Path dir;

  private static Config config(String memtable, ManualClock clock) {
    return Config.builder()
        .set("memtable.type", memtable)
        .set("total-buckets", 2)
        .set("memtable.capacity", "16kb")
        .set("sst.target-file-size", "4kb")
        .set("sst.block-size", "512b")
        .set("compaction.level-base-size", "16kb")
        .set("compaction.threads", 1)
        .set("value-separation.threshold", "48")
        .set("fsync.enabled", false)
        .clock(clock)
        .build();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  private static byte[] prefix(int p) {
    return bytes(String.format("p%02d/", p));
  }

  private static byte[] key(int p, int s) {
    return bytes(String.format("p%02d/%d", p, s));
  }

  private static boolean scanEmpty(Db db, int bucket, byte[] start, byte[] end) {
    try (ScanCursor c = db.scan(bucket, FAMILY, start, end, ScanOptions.defaults().maxRows(1))) {
      return !c.hasNext();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"skiplist", "hash", "vec", "adaptive"})
  void isEmptyAgreesWithAScanOnEveryRange(String memtable) {
    long seed = Long.getLong("cobble.range-probe.seed", System.nanoTime());
    System.out.println("RangeProbeModelTest " + memtable + " seed=" + seed);
    Random random = new Random(seed);
    ManualClock clock = new ManualClock(1_000_000);
    try (Db db = Db.open(dir, config(memtable, clock))) {
      db.createFamily(
          FAMILY,
          Arrays.asList(
              ColumnSpec.of("v"),
              ColumnSpec.merging("l", "list_append"),
              ColumnSpec.merging("e", "list_append:element_ttl=true")));
      int checks = 0;
      for (int step = 0; step < 3_000; step++) {
        int bucket = random.nextInt(2);
        byte[] k = key(random.nextInt(PREFIXES), random.nextInt(SUFFIXES));
        int op = random.nextInt(100);
        String pad = "x".repeat(random.nextInt(4) == 0 ? 60 : 4);
        if (op < 35) {
          db.put(bucket, FAMILY, k, 0, bytes("v" + step + pad));
        } else if (op < 45) {
          db.put(bucket, FAMILY, k, 0, bytes("t" + step), 1 + random.nextInt(400));
        } else if (op < 55) {
          db.merge(bucket, FAMILY, k, 1, ListCodec.element(bytes("l" + step)));
        } else if (op < 62) {
          db.merge(
              bucket, FAMILY, k, 2, ListCodec.element(bytes("e" + step)), 1 + random.nextInt(400));
        } else if (op < 72) {
          db.delete(bucket, FAMILY, k, random.nextInt(3));
        } else if (op < 85) {
          db.deleteRow(bucket, FAMILY, k);
        } else if (op < 88) {
          db.flush();
        } else if (op < 89) {
          db.compactAll();
        } else {
          clock.advance(random.nextInt(120));
        }
        for (int q = 0; q < 3; q++) {
          int b = random.nextInt(2);
          byte[] start;
          byte[] end;
          if (random.nextBoolean()) {
            int p = random.nextInt(PREFIXES);
            start = prefix(p);
            end = prefix(p + 1);
          } else {
            start =
                random.nextInt(8) == 0
                    ? null
                    : key(random.nextInt(PREFIXES), random.nextInt(SUFFIXES));
            end =
                random.nextInt(8) == 0
                    ? null
                    : key(random.nextInt(PREFIXES + 1), random.nextInt(SUFFIXES));
            if (start != null && end != null && io.cobble.util.Bytes.compare(start, end) > 0) {
              byte[] t = start;
              start = end;
              end = t;
            }
          }
          String at = "seed=" + seed + " step=" + step + " bucket=" + b;
          assertEquals(
              scanEmpty(db, b, start, end),
              db.isEmpty(b, FAMILY, start, end),
              at + " range=" + text(start) + ".." + text(end));
          checks++;
          byte[] p = key(random.nextInt(PREFIXES), random.nextInt(SUFFIXES));
          int length = random.nextInt(p.length + 1);
          assertEquals(
              noRowStartsWith(db, b, Arrays.copyOf(p, length)),
              db.isEmptyWithPrefix(b, FAMILY, p, length),
              at + " prefix=" + text(p) + "/" + length);
        }
      }
      assertEquals(9_000, checks);
    }
  }

  /** Whether the first row at or after {@code prefix} (a scan with no end) lacks the prefix. */
  private static boolean noRowStartsWith(Db db, int bucket, byte[] prefix) {
    try (ScanCursor c = db.scan(bucket, FAMILY, prefix, null, ScanOptions.defaults().maxRows(1))) {
      if (!c.hasNext()) {
        return true;
      }
      byte[] first = c.next().key();
      return first.length < prefix.length
          || !Arrays.equals(first, 0, prefix.length, prefix, 0, prefix.length);
    }
  }

  /**
   * A prefix probe reads only its prefix's keys where the prefix ends in 0xFF bytes, or is all
   * 0xFF, or empty, in a buffer longer than the prefix.
   */
  @Test
  void prefixProbesEndAfterTrailingFfBytesAndAtTheBucketsEnd() {
    try (Db db = Db.open(dir, config("skiplist", new ManualClock(1_000_000)))) {
      db.createFamily(FAMILY, Arrays.asList(ColumnSpec.of("v")));
      byte ff = (byte) 0xFF;
      db.put(0, FAMILY, new byte[] {'a', ff, ff, 1}, 0, bytes("x"));
      db.put(1, FAMILY, new byte[] {ff, ff, 7}, 0, bytes("x"));
      byte[] buffer = {'a', ff, ff, 1, 9, 9};
      assertFalse(db.isEmptyWithPrefix(0, FAMILY, buffer, 3));
      assertFalse(db.isEmptyWithPrefix(0, FAMILY, buffer, 4));
      assertTrue(db.isEmptyWithPrefix(0, FAMILY, buffer, 5), "a prefix longer than the key");
      assertFalse(db.isEmptyWithPrefix(0, FAMILY, buffer, 0), "an empty prefix is the bucket");
      assertTrue(db.isEmptyWithPrefix(0, FAMILY, new byte[] {'a', ff, ff, 2}, 4));
      assertTrue(db.isEmptyWithPrefix(0, FAMILY, new byte[] {'b'}, 1), "past the key");
      byte[] allFf = {ff, ff, ff};
      assertTrue(db.isEmptyWithPrefix(0, FAMILY, allFf, 2), "another bucket's key");
      assertFalse(db.isEmptyWithPrefix(1, FAMILY, allFf, 2), "to the bucket's end");
      assertTrue(db.isEmptyWithPrefix(1, FAMILY, allFf, 3));
      db.flush();
      db.compactAll();
      assertFalse(db.isEmptyWithPrefix(0, FAMILY, buffer, 3), "in a table");
      assertFalse(db.isEmptyWithPrefix(1, FAMILY, allFf, 2), "in a table, to the bucket's end");
      assertTrue(db.isEmptyWithPrefix(1, FAMILY, allFf, 3), "in a table");
    }
  }

  private static String text(byte[] b) {
    return b == null ? "*" : new String(b, UTF_8);
  }

  /**
   * The cases the shortcut must leave to the full merge, each on a row only an older table holds.
   */
  @Test
  void newerTombstonesExpiredPutsAndMergesOverAnOlderRowAreMerged() {
    ManualClock clock = new ManualClock(1_000_000);
    try (Db db = Db.open(dir, config("skiplist", clock))) {
      db.createFamily(
          FAMILY, Arrays.asList(ColumnSpec.of("v"), ColumnSpec.merging("l", "list_append")));
      byte[] a = key(1, 1);
      byte[] b = key(1, 2);
      db.put(0, FAMILY, a, 0, bytes("old"));
      db.put(0, FAMILY, b, 0, bytes("old"));
      db.flush();
      db.compactAll();
      db.deleteRow(0, FAMILY, a);
      assertFalse(db.isEmpty(0, FAMILY, prefix(1), prefix(2)), "b is still live");
      db.deleteRow(0, FAMILY, b);
      assertTrue(db.isEmpty(0, FAMILY, prefix(1), prefix(2)), "both deleted in the memtable");
      db.flush();
      assertTrue(db.isEmpty(0, FAMILY, prefix(1), prefix(2)), "both deleted in level 0");

      db.put(0, FAMILY, key(2, 1), 0, bytes("old"));
      db.flush();
      db.put(0, FAMILY, key(2, 1), 0, bytes("short"), 10);
      clock.advance(20);
      assertTrue(
          db.isEmpty(0, FAMILY, prefix(2), prefix(3)), "a newer expired put hides the older");

      db.merge(0, FAMILY, key(3, 1), 1, ListCodec.element(bytes("x")));
      assertFalse(db.isEmpty(0, FAMILY, prefix(3), prefix(4)), "a merge operand alone is a value");
      assertTrue(db.isEmpty(1, FAMILY, prefix(3), prefix(4)), "other bucket");
    }
  }
}
