package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.util.Bytes;
import java.io.ByteArrayOutputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A vec memtable whose arena outgrows the pages its index references carry addresses for ({@link
 * RecordRef#CARRIED_PAGES}) reads every key as before: seeded random puts of small keys (a fifth
 * replacing, the rest folded) are interleaved with 1-MB rows that each take a page of their own, so
 * the same keys have records before and past the carried pages (and, before the first 1-MB row,
 * across whole full-grown pages, so carried offsets span a page), with gets between the puts (the
 * index built early, linked by the puts, and grown) or none until the end (the index built by the
 * first get). Checked against a model of each key's fold. Replay with {@code -Dcobble.test.seed}.
 */
class LargeArenaReadTest {
  private static final int KEYS = 400;
  private static final int BIG_ROWS = RecordRef.CARRIED_PAGES + 12;
  // Small records fill whole full-grown pages first, so carried offsets span a page's range.
  private static final long FILLED_PAGES_BYTES = 5L * Arena.MAX_PAGE_SIZE / 2;

  @Test
  void keysPastTheCarriedPagesReadAsTheirFold() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    for (boolean getsBetween : new boolean[] {true, false}) {
      String note = "gets between puts " + getsBetween + ", seed " + seed;
      Random random = new Random(seed);
      VecMemTable table = new VecMemTable(1, TestMemTables.CONCAT);
      Map<Integer, byte[]> model = new HashMap<>();
      byte[] big = new byte[Arena.MAX_PAGE_SIZE];
      int bigRows = 0;
      int puts = 0;
      while (bigRows < BIG_ROWS || puts < 40_000) {
        boolean pagesFilled = bigRows > 0 || table.approximateBytes() >= FILLED_PAGES_BYTES;
        if (pagesFilled && bigRows < BIG_ROWS && random.nextInt(300) == 0) {
          byte[] key = {'b', (byte) bigRows};
          big[0] = (byte) bigRows;
          table.put(key, key.length, big, big.length, true);
          bigRows++;
          continue;
        }
        int k = random.nextInt(KEYS);
        byte[] row = {(byte) puts, (byte) (puts >>> 8)};
        boolean replaces = random.nextInt(5) == 0;
        table.put(key(k), 4, row, row.length, replaces);
        byte[] before = model.get(k);
        model.put(
            k, replaces || before == null ? row : TestMemTables.CONCAT.combine(null, before, row));
        puts++;
        if (getsBetween && random.nextInt(20) == 0) {
          int q = random.nextInt(KEYS);
          assertArrayEquals(model.get(q), table.get(key(q), 4), "key " + q + ", " + note);
        }
      }
      for (int k = 0; k < KEYS; k++) {
        assertArrayEquals(model.get(k), table.get(key(k), 4), "key " + k + ", " + note);
        ByteArrayOutputStream sunk = new ByteArrayOutputStream();
        boolean found = table.get(key(k), 4, (buf, off, len) -> sunk.write(buf, off, len));
        assertEquals(model.containsKey(k), found, note);
        if (found) {
          assertArrayEquals(model.get(k), sunk.toByteArray(), "key " + k + ", " + note);
        }
      }
      for (int b = 0; b < BIG_ROWS; b++) {
        byte[] row = table.get(new byte[] {'b', (byte) b}, 2);
        assertTrue(row != null && row.length == big.length && row[0] == (byte) b, note);
      }
      assertTrue(table.approximateBytes() > (long) BIG_ROWS * big.length, note);
    }
  }

  private static byte[] key(int k) {
    byte[] key = new byte[4];
    Bytes.putInt(key, 0, k);
    return key;
  }
}
