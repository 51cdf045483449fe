package io.cobble;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.schema.ColumnSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#getColumn} returns exactly what {@code get} with a projection of that column returns in
 * its slot, over random puts, merges, deletes, row deletes, TTL expiry and flushes (seed printed,
 * replayable with {@code -Dcobble.test.seed=N}).
 */
class GetColumnTest {
  private static final String FAMILY = "f";
  private static final int KEYS = 8;

  @TempDir Path dir;

  @Test
  void agreesWithAProjectedGetOverRandomHistories() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    System.out.println("GetColumnTest seed " + seed + " (-Dcobble.test.seed=" + seed + ")");
    Random r = new Random(seed);
    ManualClock clock = new ManualClock(1_000_000);
    Config config = Config.builder().set("memtable.type", "adaptive").clock(clock).build();
    try (Db db = Db.open(dir, config)) {
      db.createFamily(
          FAMILY, List.of(ColumnSpec.of("plain"), ColumnSpec.merging("text", "concat")));
      for (int step = 0; step < 2_000; step++) {
        byte[] key = bytes("k" + r.nextInt(KEYS));
        int column = r.nextInt(2);
        byte[] value = bytes("v" + step);
        int op = r.nextInt(10);
        if (op < 3) {
          db.put(0, FAMILY, key, column, value, r.nextBoolean() ? 0 : 1 + r.nextInt(50));
        } else if (op < 6) {
          db.merge(0, FAMILY, key, 1, value, r.nextBoolean() ? 0 : 1 + r.nextInt(50));
        } else if (op < 7) {
          db.delete(0, FAMILY, key, column);
        } else if (op < 8) {
          db.deleteRow(0, FAMILY, key);
        } else if (op < 9) {
          clock.advance(r.nextInt(20));
        } else if (r.nextInt(10) == 0) {
          db.flush();
        }
        for (int k = 0; k < KEYS; k++) {
          byte[] probe = bytes("k" + k);
          for (int c = 0; c < 2; c++) {
            byte[][] row = db.get(0, FAMILY, probe, ReadOptions.columns(c));
            assertArrayEquals(
                row == null ? null : row[0],
                db.getColumn(0, FAMILY, probe, c),
                "key k" + k + " column " + c + " at step " + step + ", seed " + seed);
          }
        }
      }
    }
  }

  @Test
  void anUnknownColumnIsRejectedByPosition() {
    try (Db db = Db.open(dir, Config.builder().build())) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> db.getColumn(0, "default", bytes("k"), 3));
      assertTrue(e.getMessage().contains("unknown column 3"), e.getMessage());
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
