package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A scan cursor reads the Db as it was when the scan was opened, with every memtable type: writes
 * made after it (new keys, overwrites, deletes, merges) never show, also across flushes and
 * compactions that run while it is open. The random test prints its seed; replay one with {@code
 * -Dcobble.scan-view.seed=<seed>}.
 */
class ScanViewTest {
  private static final String FAMILY = "f";

  @TempDir Path dir;

  private static Config config(String memtable) {
    return Config.builder()
        .set("memtable.type", memtable)
        .set("memtable.capacity", "16kb")
        .set("sst.target-file-size", "8kb")
        .set("sst.block-size", "1kb")
        .set("compaction.level-base-size", "32kb")
        .set("compaction.threads", 1)
        .set("value-separation.threshold", "64")
        .set("fsync.enabled", false)
        .build();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  private static String text(byte[] b) {
    return b == null ? "-" : new String(b, UTF_8);
  }

  /** Rows as {@code key=value} of the default family's one column. */
  private static String rest(ScanCursor c) {
    StringBuilder out = new StringBuilder();
    while (c.hasNext()) {
      Row r = c.next();
      out.append(' ').append(text(r.key())).append('=').append(text(r.column(0)));
    }
    return out.toString().trim();
  }

  /**
   * A cursor read in place ({@link ScanCursor#advance}) returns the rows an iterator over the same
   * view returns: values in memtables, tables and the value log (above 64 bytes), overwrites and
   * deletes, bounded ranges, {@code maxRows} and {@code startAfter}; the two ways do not mix.
   */
  @ParameterizedTest
  @ValueSource(strings = {"skiplist", "vec", "adaptive"})
  void rowsReadInPlaceAreTheRowsAnIteratorReads(String memtable) {
    Random rnd = new Random(memtable.hashCode());
    try (Db db = Db.open(dir, config(memtable))) {
      for (int i = 0; i < 3_000; i++) {
        byte[] key = bytes("k" + rnd.nextInt(400));
        if (rnd.nextInt(5) == 0) {
          db.deleteRow(0, "default", key);
        } else {
          db.put(0, "default", key, 0, bytes(i + "v".repeat(rnd.nextInt(3) == 0 ? 100 : 3)));
        }
        if (i % 1_000 == 999) {
          db.flush();
        }
      }
      for (int round = 0; round < 200; round++) {
        byte[] start = rnd.nextInt(4) == 0 ? null : bytes("k" + rnd.nextInt(400));
        byte[] end = rnd.nextInt(4) == 0 ? null : bytes("k" + rnd.nextInt(400));
        if (start != null && end != null && io.cobble.util.Bytes.compare(start, end) > 0) {
          byte[] t = start;
          start = end;
          end = t;
        }
        ScanOptions options = ScanOptions.defaults();
        if (rnd.nextBoolean()) {
          options = options.maxRows(1 + rnd.nextInt(20));
        }
        if (rnd.nextInt(3) == 0) {
          options = options.startAfter(bytes("k" + rnd.nextInt(400)));
        }
        String expected;
        try (ScanCursor c = db.scan(0, "default", start, end, options)) {
          expected = rest(c);
        }
        StringBuilder actual = new StringBuilder();
        try (ScanCursor c = db.scan(0, "default", start, end, options)) {
          while (c.advance()) {
            actual
                .append(' ')
                .append(new String(c.keyArray(), c.keyOffset(), c.keyLength(), UTF_8))
                .append('=')
                .append(new String(c.valueArray(0), c.valueOffset(0), c.valueLength(0), UTF_8));
          }
          assertFalse(c.advance(), "an exhausted cursor stays exhausted");
        }
        assertEquals(expected, actual.toString().trim(), "round " + round);
      }
      try (ScanCursor c = db.scan(0, "default", null, null, ScanOptions.DEFAULT)) {
        assertTrue(c.hasNext());
        assertThrows(IllegalStateException.class, c::advance);
      }
      try (ScanCursor c = db.scan(0, "default", null, null, ScanOptions.DEFAULT)) {
        assertTrue(c.advance());
        assertThrows(IllegalStateException.class, c::hasNext);
      }
    }
  }

  /**
   * The walk-through: read one row, then put f, overwrite g and delete e ahead of the
   * cursor; it still returns a, c, e and g=1.
   */
  @ParameterizedTest
  @ValueSource(strings = {"skiplist", "hash", "vec", "adaptive"})
  void writesAheadOfAnOpenCursorDoNotShow(String memtable) {
    try (Db db = Db.open(dir, config(memtable))) {
      for (String k : List.of("a", "c", "e", "g")) {
        db.put(0, "default", bytes(k), 0, bytes("1"));
      }
      try (ScanCursor c = db.scan(0, "default", null, null, ScanOptions.DEFAULT)) {
        assertEquals("a", text(c.next().key()));
        db.put(0, "default", bytes("f"), 0, bytes("new"));
        db.put(0, "default", bytes("g"), 0, bytes("2"));
        db.deleteRow(0, "default", bytes("e"));
        assertEquals("c=1 e=1 g=1", rest(c));
      }
      try (ScanCursor c = db.scan(0, "default", null, null, ScanOptions.DEFAULT)) {
        assertEquals("a=1 c=1 f=new g=2", rest(c));
      }
    }
  }

  /**
   * A cursor over tables and memtables stays on its view while the memtable it reads is flushed,
   * every tree is compacted into one level (its tables replaced on disk) and more writes land.
   */
  @ParameterizedTest
  @ValueSource(strings = {"skiplist", "hash", "vec", "adaptive"})
  void flushAndCompactionWhileOpenChangeNothingInTheView(String memtable) {
    try (Db db = Db.open(dir, config(memtable))) {
      int keys = 600;
      TreeMap<String, String> view = new TreeMap<>();
      for (int i = 0; i < keys; i += 2) {
        put(db, view, i, "old" + i);
      }
      db.flush();
      for (int i = 0; i < keys; i += 3) {
        put(db, view, i, "mem" + i + "x".repeat(i % 5 == 0 ? 80 : 0));
      }
      try (ScanCursor c = db.scan(0, "default", null, null, ScanOptions.DEFAULT)) {
        Iterator<Map.Entry<String, String>> expected = view.entrySet().iterator();
        for (int n = 0; n < 10; n++) {
          check(expected, c.next());
        }
        for (int i = 0; i < keys; i++) {
          if (i % 4 == 0) {
            db.deleteRow(0, "default", key(i));
          } else {
            db.put(0, "default", key(i), 0, bytes("later" + i));
          }
        }
        db.flush();
        db.compactAll();
        for (int i = keys; i < keys + 50; i++) {
          db.put(0, "default", key(i), 0, bytes("later" + i));
        }
        while (c.hasNext()) {
          check(expected, c.next());
        }
        assertFalse(expected.hasNext(), "cursor ended early");
      }
    }
  }

  private static byte[] key(int i) {
    return bytes(String.format("k%04d", i));
  }

  private static void put(Db db, TreeMap<String, String> model, int i, String value) {
    db.put(0, "default", key(i), 0, bytes(value));
    model.put(text(key(i)), value);
  }

  private static void check(Iterator<Map.Entry<String, String>> expected, Row row) {
    assertTrue(expected.hasNext(), "row beyond the view: " + text(row.key()));
    Map.Entry<String, String> e = expected.next();
    assertEquals(e.getKey() + "=" + e.getValue(), text(row.key()) + "=" + text(row.column(0)));
  }

  /** Expiry is judged at the scan's opening too: a row alive then stays in the view. */
  @Test
  void rowsExpiringWhileTheCursorIsOpenStayInItsView() {
    ManualClock clock = new ManualClock(1_000_000);
    Config config = Config.builder().set("memtable.type", "skiplist").clock(clock).build();
    try (Db db = Db.open(dir, config)) {
      db.put(0, "default", bytes("a"), 0, bytes("1"), 1000);
      db.put(0, "default", bytes("b"), 0, bytes("1"), 1000);
      db.put(0, "default", bytes("c"), 0, bytes("1"));
      try (ScanCursor c = db.scan(0, "default", null, null, ScanOptions.DEFAULT)) {
        assertEquals("a", text(c.next().key()));
        clock.advance(2000);
        assertEquals("b=1 c=1", rest(c));
      }
      try (ScanCursor c = db.scan(0, "default", null, null, ScanOptions.DEFAULT)) {
        assertEquals("c=1", rest(c));
      }
    }
  }

  @Test
  void startAfterEndIsRejected() {
    try (Db db = Db.open(dir, config("adaptive"))) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> db.scan(0, "default", bytes("b"), bytes("a"), ScanOptions.DEFAULT));
      assertTrue(e.getMessage().contains("start is after end"), e.getMessage());
      try (ScanCursor empty = db.scan(0, "default", bytes("a"), bytes("a"), ScanOptions.DEFAULT)) {
        db.put(0, "default", bytes("a"), 0, bytes("1"));
        assertFalse(empty.hasNext(), "[a, a) is empty");
      }
    }
  }

  /**
   * Random puts, merges, column and row deletes, flushes and compactions (also the ones a full
   * memtable starts by itself) with cursors opened, read in steps and closed at random moments;
   * each cursor is checked against a copy of the model taken when it opened.
   */
  @ParameterizedTest
  @ValueSource(strings = {"skiplist", "hash", "vec", "adaptive"})
  void randomWritesMatchTheModelAsOfEachScan(String memtable) {
    long seed = Long.getLong("cobble.scan-view.seed", System.nanoTime());
    System.out.println("ScanViewTest " + memtable + " seed " + seed);
    try (Db db = Db.open(dir, config(memtable))) {
      db.createFamily(
          FAMILY, List.of(ColumnSpec.of("plain"), ColumnSpec.merging("text", "concat")));
      randomRun(db, new Random(seed));
    } catch (AssertionError | RuntimeException e) {
      throw new AssertionError(
          memtable + " seed " + seed + " (replay: -Dcobble.scan-view.seed=" + seed + "): " + e, e);
    }
  }

  private static void randomRun(Db db, Random rnd) {
    TreeMap<String, String[]> model = new TreeMap<>();
    List<OpenScan> open = new ArrayList<>();
    int keys = 50 + rnd.nextInt(1500);
    for (int op = 0; op < 4000; op++) {
      int dice = rnd.nextInt(1000);
      byte[] k = key(rnd.nextInt(keys));
      String[] row = model.computeIfAbsent(text(k), x -> new String[2]);
      if (dice < 450) {
        String v = op + (rnd.nextInt(8) == 0 ? "v".repeat(100) : "");
        db.put(0, FAMILY, k, 0, bytes(v));
        row[0] = v;
      } else if (dice < 550) {
        String operand = Integer.toString(op, 36) + ";";
        db.merge(0, FAMILY, k, 1, bytes(operand));
        row[1] = row[1] == null ? operand : row[1] + operand;
      } else if (dice < 600) {
        int column = rnd.nextInt(2);
        db.delete(0, FAMILY, k, column);
        row[column] = null;
      } else if (dice < 640) {
        db.deleteRow(0, FAMILY, k);
        row[0] = null;
        row[1] = null;
      } else if (dice < 700) {
        String start = rnd.nextInt(3) == 0 ? text(key(rnd.nextInt(keys))) : null;
        String end = rnd.nextInt(3) == 0 ? text(key(rnd.nextInt(keys))) : null;
        if (start != null && end != null && start.compareTo(end) > 0) {
          String t = start;
          start = end;
          end = t;
        }
        ScanCursor c =
            db.scan(
                0,
                FAMILY,
                start == null ? null : bytes(start),
                end == null ? null : bytes(end),
                ScanOptions.DEFAULT);
        open.add(new OpenScan(c, view(model, start, end)));
      } else if (dice < 960 && !open.isEmpty()) {
        OpenScan s = open.get(rnd.nextInt(open.size()));
        if (s.read(rnd.nextInt(40))) {
          open.remove(s);
        }
      } else if (dice < 975 && !open.isEmpty()) {
        open.remove(rnd.nextInt(open.size())).cursor.close();
      } else if (dice < 992) {
        db.flush();
      } else {
        db.compactAll();
      }
    }
    for (OpenScan s : open) {
      assertTrue(s.read(Integer.MAX_VALUE));
    }
  }

  /** The rows of {@code [start, end)} that have a live column, as {@code plain|text}. */
  private static List<String> view(TreeMap<String, String[]> model, String start, String end) {
    List<String> out = new ArrayList<>();
    Map<String, String[]> range =
        start == null
            ? (end == null ? model : model.headMap(end))
            : (end == null ? model.tailMap(start) : model.subMap(start, end));
    for (Map.Entry<String, String[]> e : range.entrySet()) {
      String[] r = e.getValue();
      if (r[0] != null || r[1] != null) {
        out.add(e.getKey() + " " + r[0] + "|" + r[1]);
      }
    }
    return out;
  }

  /** An open cursor and the rows it must still return. */
  private static final class OpenScan {
    final ScanCursor cursor;
    final Iterator<String> expected;

    OpenScan(ScanCursor cursor, List<String> expected) {
      this.cursor = cursor;
      this.expected = expected.iterator();
    }

    /** Checks up to {@code n} rows; true when the cursor is exhausted (and closed). */
    boolean read(int n) {
      for (; n > 0 && cursor.hasNext(); n--) {
        Row r = cursor.next();
        String got =
            text(r.key())
                + " "
                + (r.column(0) == null ? null : text(r.column(0)))
                + "|"
                + (r.column(1) == null ? null : text(r.column(1)));
        assertTrue(expected.hasNext(), "row beyond the view: " + got);
        assertEquals(expected.next(), got);
      }
      if (cursor.hasNext()) {
        return false;
      }
      assertFalse(expected.hasNext(), "cursor ended early");
      cursor.close();
      return true;
    }
  }
}
