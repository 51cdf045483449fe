package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.cobble.schema.ColumnSpec;
import io.cobble.util.Bytes;
import java.nio.charset.StandardCharsets;
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
 * {@link Db#scanPrefix} returns exactly the live rows whose keys start with the prefix, in key
 * order, against a model kept as a sorted map of strings: keys rich in 0xFF bytes in buckets at the
 * byte edges (the low byte 0xFF, the last bucket), written, overwritten and deleted across the
 * memtable, level 0 and compacted levels; read as an iterator and in place, resumed after a row,
 * cut by a row limit, and with a second prefix scan opened inside the first (whose bounds must not
 * overwrite the first's).
 */
class ScanPrefixTest {
  private static final String FAMILY = "m";
  private static final int[] BUCKETS = {0, 0xFF, 0x100, 0xFFFF};
  private static final byte[][] ALPHABET = {
    {(byte) 0xFF}, {0}, {1}, {(byte) 0xFE}, {'a'},
  };

  @TempDir Path dir;

  private static Config config() {
    return Config.builder()
        .set("memtable.type", "skiplist")
        .set("total-buckets", 65536)
        .set("memtable.capacity", "16kb")
        .set("sst.target-file-size", "4kb")
        .set("sst.block-size", "512b")
        .set("compaction.level-base-size", "16kb")
        .set("compaction.threads", 1)
        .set("fsync.enabled", false)
        .build();
  }

  @Test
  void prefixScansReturnExactlyThePrefixRows() {
    Random r = new Random(21);
    // The model: per bucket, key (as ISO-8859-1 text, which sorts as unsigned bytes) -> value.
    List<TreeMap<String, String>> model = new ArrayList<>();
    for (int i = 0; i < BUCKETS.length; i++) {
      model.add(new TreeMap<>());
    }
    try (Db db = Db.open(dir, config())) {
      db.createFamily(FAMILY, Arrays.asList(ColumnSpec.of("v")));
      for (int step = 0; step < 3_000; step++) {
        int b = r.nextInt(BUCKETS.length);
        byte[] key = randomKey(r, 1 + r.nextInt(4));
        if (r.nextInt(5) == 0) {
          db.deleteRow(BUCKETS[b], FAMILY, key);
          model.get(b).remove(text(key));
        } else {
          String value = "v" + step;
          db.put(BUCKETS[b], FAMILY, key, 0, value.getBytes(UTF_8));
          model.get(b).put(text(key), value);
        }
        if (step % 700 == 699) {
          db.flush();
        }
        if (step == 2_100) {
          db.compactAll();
        }
        if (step % 50 == 0) {
          for (int q = 0; q < 8; q++) {
            int qb = r.nextInt(BUCKETS.length);
            byte[] prefix = randomKey(r, r.nextInt(4));
            checkPrefix(db, BUCKETS[qb], prefix, expected(model.get(qb), prefix), r);
          }
        }
      }
    }
  }

  @Test
  void aPrefixScanOpenedInsideAnotherKeepsBothBounds() {
    try (Db db = Db.open(dir, config())) {
      db.createFamily(FAMILY, Arrays.asList(ColumnSpec.of("v")));
      for (String k : new String[] {"a1", "a2", "a3", "b1", "b2", "bb1", "c"}) {
        db.put(0, FAMILY, bytes(k), 0, bytes(k));
      }
      db.flush();
      List<String> outer = new ArrayList<>();
      List<String> inner = new ArrayList<>();
      try (ScanCursor a = db.scanPrefix(0, FAMILY, bytes("a"), ScanOptions.defaults())) {
        while (a.hasNext()) {
          outer.add(text(a.next().key()));
          try (ScanCursor b = db.scanPrefix(0, FAMILY, bytes("bb"), ScanOptions.defaults())) {
            while (b.hasNext()) {
              inner.add(text(b.next().key()));
            }
          }
        }
      }
      assertEquals(Arrays.asList("a1", "a2", "a3"), outer);
      assertEquals(Arrays.asList("bb1", "bb1", "bb1"), inner);
      assertThrows(
          NullPointerException.class, () -> db.scanPrefix(0, FAMILY, null, ScanOptions.defaults()));
    }
  }

  private static void checkPrefix(
      Db db, int bucket, byte[] prefix, List<String> expected, Random r) {
    String where = "bucket " + bucket + ", prefix " + Arrays.toString(prefix);
    assertEquals(expected, iterated(db, bucket, prefix, ScanOptions.defaults()), where);
    List<String> inPlace = new ArrayList<>();
    try (ScanCursor c = db.scanPrefix(bucket, FAMILY, prefix, ScanOptions.defaults())) {
      while (c.advance()) {
        byte[] key = Arrays.copyOfRange(c.keyArray(), c.keyOffset(), c.keyOffset() + c.keyLength());
        String value = new String(c.valueArray(0), c.valueOffset(0), c.valueLength(0), UTF_8);
        inPlace.add(text(key) + "=" + value);
      }
    }
    assertEquals(expected, inPlace, where + ", read in place");
    if (!expected.isEmpty()) {
      int cut = r.nextInt(expected.size());
      byte[] after = bytesOf(expected.get(cut).substring(0, expected.get(cut).indexOf('=')));
      assertEquals(
          expected.subList(cut + 1, expected.size()),
          iterated(db, bucket, prefix, ScanOptions.defaults().startAfter(after)),
          where + ", resumed after row " + cut);
      int limit = 1 + r.nextInt(expected.size());
      assertEquals(
          expected.subList(0, limit),
          iterated(db, bucket, prefix, ScanOptions.defaults().maxRows(limit)),
          where + ", " + limit + " rows");
    }
  }

  private static List<String> iterated(Db db, int bucket, byte[] prefix, ScanOptions options) {
    List<String> rows = new ArrayList<>();
    try (ScanCursor c = db.scanPrefix(bucket, FAMILY, prefix, options)) {
      while (c.hasNext()) {
        Row row = c.next();
        rows.add(text(row.key()) + "=" + new String(row.column(0), UTF_8));
      }
      assertFalse(c.hasNext());
    }
    return rows;
  }

  /** The model's rows whose keys start with {@code prefix}, by a walk over the whole map. */
  private static List<String> expected(TreeMap<String, String> rows, byte[] prefix) {
    String p = text(prefix);
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, String> e : rows.entrySet()) {
      if (e.getKey().startsWith(p)) {
        out.add(e.getKey() + "=" + e.getValue());
      }
    }
    return out;
  }

  private static byte[] randomKey(Random r, int symbols) {
    byte[] out = Bytes.EMPTY;
    for (int i = 0; i < symbols; i++) {
      byte[] s = ALPHABET[r.nextInt(ALPHABET.length)];
      out = Arrays.copyOf(out, out.length + s.length);
      System.arraycopy(s, 0, out, out.length - s.length, s.length);
    }
    return out;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  /** Bytes as ISO-8859-1 text: one char per byte, ordered as the unsigned bytes are. */
  private static String text(byte[] b) {
    return new String(b, StandardCharsets.ISO_8859_1);
  }

  private static byte[] bytesOf(String text) {
    return text.getBytes(StandardCharsets.ISO_8859_1);
  }
}
