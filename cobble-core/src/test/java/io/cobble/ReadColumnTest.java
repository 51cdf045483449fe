package io.cobble;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cobble.schema.ColumnSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Db#readColumn} hands its sink exactly what a get with a projection of that column returns
 * in its slot, once, and nothing when that is null, over random puts (short values, values in the
 * value log, with and without TTL), merges, deletes, row deletes, TTL expiry, flushes and
 * compactions (seed printed, replayable with {@code -Dcobble.test.seed=N}). The sink may get the
 * stored bytes in place, so it copies them during the call, as a caller must.
 */
class ReadColumnTest {
  private static final String FAMILY = "f";
  private static final int KEYS = 8;

  @TempDir Path dir;

  @Test
  void handsOverWhatAProjectedGetReturnsOverRandomHistories() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    System.out.println("ReadColumnTest seed " + seed + " (-Dcobble.test.seed=" + seed + ")");
    Random r = new Random(seed);
    ManualClock clock = new ManualClock(1_000_000);
    Config config =
        Config.builder()
            .set("memtable.type", "adaptive")
            .set("value-separation.threshold", "32")
            .clock(clock)
            .build();
    byte[][] got = new byte[1][];
    int[] calls = new int[1];
    try (Db db = Db.open(dir, config)) {
      db.createFamily(
          FAMILY,
          List.of(
              ColumnSpec.of("plain"),
              ColumnSpec.merging("text", "concat"),
              ColumnSpec.of("other")));
      for (int step = 0; step < 2_000; step++) {
        byte[] key = bytes("k" + r.nextInt(KEYS));
        int column = r.nextInt(3);
        byte[] value = bytes(r.nextInt(4) == 0 ? "long value ".repeat(8) + step : "v" + step);
        long ttl = r.nextBoolean() ? 0 : 1 + r.nextInt(50);
        int op = r.nextInt(12);
        if (op < 4) {
          db.put(0, FAMILY, key, column, value, ttl);
        } else if (op < 6) {
          db.merge(0, FAMILY, key, 1, value, ttl);
        } else if (op < 7) {
          db.delete(0, FAMILY, key, column);
        } else if (op < 8) {
          db.deleteRow(0, FAMILY, key);
        } else if (op < 10) {
          clock.advance(r.nextInt(20));
        } else if (r.nextInt(10) == 0) {
          db.flush();
        } else if (r.nextInt(40) == 0) {
          db.compactAll();
        }
        for (int k = 0; k < KEYS; k++) {
          byte[] probe = bytes("k" + k);
          for (int c = 0; c < 3; c++) {
            byte[][] row = db.get(0, FAMILY, probe, ReadOptions.columns(c));
            got[0] = null;
            calls[0] = 0;
            boolean found =
                db.readColumn(
                    0,
                    FAMILY,
                    probe,
                    c,
                    (buf, off, len) -> {
                      got[0] = Arrays.copyOfRange(buf, off, off + len);
                      calls[0]++;
                    });
            String where = "key k" + k + " column " + c + " at step " + step + ", seed " + seed;
            assertArrayEquals(row == null ? null : row[0], got[0], where);
            assertEquals(row != null, found, where);
            assertEquals(row == null ? 0 : 1, calls[0], where);
          }
        }
      }
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
