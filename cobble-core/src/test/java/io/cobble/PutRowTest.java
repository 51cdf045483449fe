package io.cobble;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@link Db#putRow}: one whole-row delta that reads like a put of every column. */
class PutRowTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  private static byte[] u64(long v) {
    return ByteBuffer.allocate(8).putLong(v).array();
  }

  private static Db open(Path dir, MemTableType type) {
    Db db =
        Db.open(
            dir,
            Config.builder()
                .set("memtable.type", type.name().toLowerCase())
                .set("memtable.capacity", "64kb")
                .build());
    db.createFamily(
        "t",
        Arrays.asList(ColumnSpec.of("a"), ColumnSpec.merging("n", "u64_add"), ColumnSpec.of("c")));
    return db;
  }

  /**
   * The row replaces every column, merge column included, in the memtable and after a flush; writes
   * after it fold onto it; only the buffers' given lengths count.
   */
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void replacesTheWholeRowAndLaterWritesFoldOntoIt(MemTableType type) {
    try (Db db = open(dir, type)) {
      db.put(0, "t", b("k"), 0, b("old-a"));
      db.merge(0, "t", b("k"), 1, u64(5));
      db.put(0, "t", b("k"), 2, b("old-c"));
      byte[] key = b("k#garbage");
      byte[] values = new byte[64];
      byte[] joined = b("new-a");
      System.arraycopy(joined, 0, values, 0, 5);
      System.arraycopy(u64(40), 0, values, 5, 8);
      int[] ends = {5, 13, 13};
      db.putRow(0, "t", key, 1, values, ends);
      db.merge(0, "t", b("k"), 1, u64(2));
      byte[][] row = db.get(0, "t", b("k"));
      assertArrayEquals(b("new-a"), row[0]);
      assertArrayEquals(u64(42), row[1]);
      assertArrayEquals(new byte[0], row[2]);
      db.flush();
      row = db.get(0, "t", b("k"));
      assertArrayEquals(b("new-a"), row[0]);
      assertArrayEquals(u64(42), row[1]);
      assertArrayEquals(new byte[0], row[2]);
      assertNull(db.get(0, "t", key));
    }
  }

  /** Many rows over few keys through several flushes: the newest row of each key wins. */
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void newestRowOfEachKeyWinsAcrossFlushes(MemTableType type) {
    try (Db db = open(dir, type)) {
      byte[] key = new byte[8];
      byte[] values = new byte[32];
      int[] ends = new int[3];
      for (int i = 0; i < 20_000; i++) {
        ByteBuffer.wrap(key).putLong(i % 500);
        ByteBuffer.wrap(values).putLong(0, i).putLong(8, i).putLong(16, -i);
        ends[0] = 8;
        ends[1] = 16;
        ends[2] = 24;
        db.putRow(0, "t", key, 8, values, ends);
      }
      assertTrue(db.metrics().flushes() > 0, "the rows went through flushes");
      for (int k = 0; k < 500; k++) {
        long newest = 19_500 + k;
        byte[][] row = db.get(0, "t", ByteBuffer.allocate(8).putLong(k).array());
        assertEquals(newest, ByteBuffer.wrap(row[0]).getLong());
        assertArrayEquals(u64(newest), row[1]);
        assertEquals(-newest, ByteBuffer.wrap(row[2]).getLong());
      }
    }
  }

  @Test
  void refusesARowThatDoesNotMatchTheFamily() {
    try (Db db = open(dir, MemTableType.VEC)) {
      byte[] values = new byte[10];
      IllegalArgumentException count =
          assertThrows(
              IllegalArgumentException.class,
              () -> db.putRow(0, "t", b("k"), 1, values, new int[] {1, 2}));
      assertTrue(count.getMessage().contains("one column end per column of 't' (3)"));
      IllegalArgumentException end =
          assertThrows(
              IllegalArgumentException.class,
              () -> db.putRow(0, "t", b("k"), 1, values, new int[] {4, 2, 3}));
      assertTrue(end.getMessage().contains("column 1 of 't' ends at 2"), end.getMessage());
      assertThrows(
          IllegalArgumentException.class,
          () -> db.putRow(0, "t", b("k"), 2, values, new int[] {1, 2, 11}));
      assertThrows(
          IllegalArgumentException.class,
          () -> db.putRow(0, "t", b("k"), 5, values, new int[] {1, 2, 3}));
      assertThrows(
          IllegalArgumentException.class,
          () -> db.putRow(0, "nope", b("k"), 1, values, new int[] {1, 2, 3}));
      assertNull(db.get(0, "t", b("k")));
    }
  }

  /**
   * A writer's family layout is reused between rows, but never across a schema change or into
   * another family: a row written after a column is added, or to another family in between, or to
   * an equal name held in another String, lands where its family says, with its new shape.
   */
  @Test
  void followsSchemaChangesAndOtherFamiliesBetweenRows() {
    try (Db db = open(dir, MemTableType.VEC)) {
      db.createFamily("u", Arrays.asList(ColumnSpec.of("x")));
      byte[] values = b("aBBBBBBBBcdef");
      db.putRow(0, "t", b("k1"), 2, values, new int[] {1, 9, 10});
      db.putRow(0, "u", b("k1"), 2, values, new int[] {4});
      db.putRow(0, new String("t".toCharArray()), b("k2"), 2, values, new int[] {0, 8, 10});
      db.addColumn("t", ColumnSpec.of("d"));
      assertThrows(
          IllegalArgumentException.class,
          () -> db.putRow(0, "t", b("k3"), 2, values, new int[] {1, 9, 10}));
      db.putRow(0, "t", b("k3"), 2, values, new int[] {1, 9, 10, 13});
      db.flush();
      assertArrayEquals(b("a"), db.get(0, "t", b("k1"))[0]);
      assertArrayEquals(b("c"), db.get(0, "t", b("k1"))[2]);
      assertArrayEquals(b("aBBB"), db.get(0, "u", b("k1"))[0]);
      assertArrayEquals(b("Bc"), db.get(0, "t", b("k2"))[2]);
      byte[][] k3 = db.get(0, "t", b("k3"));
      assertEquals(4, k3.length);
      assertArrayEquals(b("def"), k3[3]);
      assertNull(db.get(0, "u", b("k3")));
    }
  }

  /**
   * Closing while compactions run abandons them instead of waiting: whatever was running, a
   * reopened Db has every row and compacts again.
   */
  @Test
  void closingAbandonsRunningCompactionsWithoutLosingRows() {
    Config config =
        Config.builder()
            .set("memtable.type", "vec")
            .set("memtable.capacity", "64kb")
            .set("sst.target-file-size", "32kb")
            .build();
    byte[] key = new byte[8];
    byte[] values = new byte[300];
    int[] ends = {100, 108, 300};
    for (int round = 0; round < 3; round++) {
      try (Db db = Db.open(dir, config)) {
        if (round == 0) {
          db.createFamily(
              "t",
              Arrays.asList(
                  ColumnSpec.of("a"), ColumnSpec.merging("n", "u64_add"), ColumnSpec.of("c")));
        }
        for (int i = 0; i < 20_000; i++) {
          ByteBuffer.wrap(key).putLong(i % 5_000);
          ByteBuffer.wrap(values).putLong(0, round * 100_000L + i);
          db.putRow(0, "t", key, 8, values, ends);
        }
      }
    }
    try (Db db = Db.open(dir, config)) {
      for (int k = 0; k < 5_000; k++) {
        byte[][] row = db.get(0, "t", ByteBuffer.allocate(8).putLong(k).array());
        assertEquals(200_000L + 15_000 + k, ByteBuffer.wrap(row[0]).getLong(), "key " + k);
      }
      db.compactAll();
      assertEquals(
          200_000L + 15_000 + 42,
          ByteBuffer.wrap(db.get(0, "t", ByteBuffer.allocate(8).putLong(42).array())[0]).getLong());
    }
  }
}
