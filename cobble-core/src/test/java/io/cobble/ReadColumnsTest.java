package io.cobble;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.cobble.schema.ColumnSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#readColumns} hands its sink exactly what a get with the same projection returns, each
 * non-null value once at its index in the projection, and nothing when the get returns null, over
 * random whole-row puts, column puts (short values, values in the value log, with and without TTL),
 * merges, deletes, row deletes, TTL expiry, flushes and compactions, for projections of any subset
 * of the columns in any order (seed printed, replayable with {@code -Dcobble.test.seed=N}). The
 * sink may get the stored bytes in place, so it copies them during the call, as a caller must.
 */
class ReadColumnsTest {
  private static final String FAMILY = "f";
  private static final int KEYS = 8;
  private static final int[][] PROJECTIONS = {
    {0}, {1}, {2}, {0, 1, 2}, {2, 0}, {1, 2}, {2, 1, 0}, {0, 2}
  };

  @TempDir Path dir;

  @Test
  void handsOverWhatAProjectedGetReturnsOverRandomHistories() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    System.out.println("ReadColumnsTest seed " + seed + " (-Dcobble.test.seed=" + seed + ")");
    Random r = new Random(seed);
    ManualClock clock = new ManualClock(1_000_000);
    Config config =
        Config.builder()
            .set("memtable.type", "adaptive")
            .set("value-separation.threshold", "32")
            .clock(clock)
            .build();
    try (Db db = Db.open(dir, config)) {
      db.createFamily(
          FAMILY,
          List.of(
              ColumnSpec.of("plain"),
              ColumnSpec.merging("text", "concat"),
              ColumnSpec.of("other")));
      ColumnsRead[] prepared = new ColumnsRead[PROJECTIONS.length];
      for (int p = 0; p < PROJECTIONS.length; p++) {
        prepared[p] = db.prepareColumns(FAMILY, PROJECTIONS[p]);
      }
      for (int step = 0; step < 2_000; step++) {
        byte[] key = bytes("k" + r.nextInt(KEYS));
        int column = r.nextInt(3);
        byte[] value = bytes(r.nextInt(4) == 0 ? "long value ".repeat(8) + step : "v" + step);
        long ttl = r.nextBoolean() ? 0 : 1 + r.nextInt(50);
        int op = r.nextInt(14);
        if (op < 3) {
          db.put(0, FAMILY, key, column, value, ttl);
        } else if (op < 6) {
          byte[] row = bytes("a" + step + "bb" + step + "ccc" + step);
          int a = ("a" + step).length();
          int b = a + ("bb" + step).length();
          db.putRow(0, FAMILY, key, key.length, row, new int[] {a, b, row.length});
        } else if (op < 8) {
          db.merge(0, FAMILY, key, 1, value, ttl);
        } else if (op < 9) {
          db.delete(0, FAMILY, key, column);
        } else if (op < 10) {
          db.deleteRow(0, FAMILY, key);
        } else if (op < 12) {
          clock.advance(r.nextInt(20));
        } else if (r.nextInt(8) == 0) {
          db.flush();
        } else if (r.nextInt(30) == 0) {
          db.compactAll();
        }
        for (int k = 0; k < KEYS; k++) {
          byte[] probe = bytes("k" + k);
          for (int p = 0; p < PROJECTIONS.length; p++) {
            int[] projection = PROJECTIONS[p];
            byte[][] row = db.get(0, FAMILY, probe, ReadOptions.columns(projection));
            byte[][] got = new byte[projection.length][];
            int[] calls = new int[1];
            boolean found =
                db.readColumns(
                    0,
                    FAMILY,
                    probe,
                    projection,
                    (index, buf, off, len) -> {
                      got[index] = Arrays.copyOfRange(buf, off, off + len);
                      calls[0]++;
                    });
            String where =
                "key k"
                    + k
                    + " columns "
                    + Arrays.toString(projection)
                    + " at step "
                    + step
                    + ", seed "
                    + seed;
            assertEquals(row != null, found, where);
            byte[][] expected = row == null ? new byte[projection.length][] : row;
            for (int i = 0; i < projection.length; i++) {
              assertArrayEquals(expected[i], got[i], where + ", index " + i);
            }
            assertEquals(Arrays.stream(expected).filter(v -> v != null).count(), calls[0], where);
            byte[][] gotPrepared = new byte[projection.length][];
            boolean foundPrepared =
                db.readColumns(
                    0,
                    prepared[p],
                    probe,
                    (index, buf, off, len) ->
                        gotPrepared[index] = Arrays.copyOfRange(buf, off, off + len));
            assertEquals(found, foundPrepared, where + ", prepared");
            for (int i = 0; i < projection.length; i++) {
              assertArrayEquals(got[i], gotPrepared[i], where + ", prepared, index " + i);
            }
          }
        }
      }
    }
  }

  /**
   * A read prepared before a schema change reads as a read naming its family and columns would
   * after it: they are resolved again against the new schema, not read with the layout they were
   * prepared on (after a dropped column, a position past the family's columns fails).
   */
  @Test
  void aPreparedReadFollowsASchemaChange() {
    try (Db db = Db.open(dir, Config.builder().build())) {
      db.createFamily(FAMILY, List.of(ColumnSpec.of("a"), ColumnSpec.of("b")));
      ColumnsRead read = db.prepareColumns(FAMILY, new int[] {1});
      db.put(0, FAMILY, bytes("k"), 1, bytes("older"));
      db.flush();
      db.addColumn(FAMILY, ColumnSpec.of("c"));
      // The newest row holds only the new column: the read folds it with the older one.
      db.put(0, FAMILY, bytes("k"), 2, bytes("new column"));
      byte[][] got = new byte[1][];
      assertEquals(
          true,
          db.readColumns(
              0,
              read,
              bytes("k"),
              (i, buf, off, len) -> got[i] = Arrays.copyOfRange(buf, off, off + len)));
      assertArrayEquals(bytes("older"), got[0]);
      // Positions move up when columns are dropped: the prepared position 1 no longer exists.
      db.dropColumn(FAMILY, "a");
      db.dropColumn(FAMILY, "c");
      assertThrows(
          IllegalArgumentException.class,
          () -> db.readColumns(0, FAMILY, bytes("k"), new int[] {1}, (i, buf, off, len) -> {}));
      assertThrows(
          IllegalArgumentException.class,
          () -> db.readColumns(0, read, bytes("k"), (i, buf, off, len) -> {}));
      assertThrows(IllegalArgumentException.class, () -> db.prepareColumns(FAMILY, new int[] {1}));
      assertThrows(IllegalArgumentException.class, () -> db.prepareColumns("nope", new int[] {0}));
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
