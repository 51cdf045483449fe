package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.MemTableType;
import io.cobble.iterator.KvIterator;
import io.cobble.util.Bytes;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A memtable whose index starts with room for the records its predecessor held answers like one
 * that grew its index from the default: seeded random puts (replay with {@code -Dcobble.test.seed})
 * below, at and well past the expected count, folded alike, read back by key and in key order.
 */
class PresizedMemTableTest {
  @Test
  void presizedMemTablesReadLikeGrownOnes() {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    Random random = new Random(seed);
    for (int expected : new int[] {0, 1500, 4096, 5000, 1 << 16}) {
      String note = "expected " + expected + " (seed " + seed + ")";
      MemTable[] tables = {
        new VecMemTable(1, TestMemTables.CONCAT, expected),
        new AdaptiveMemTable(1, TestMemTables.CONCAT, MemTableType.VEC, expected)
      };
      MemTable reference = new VecMemTable(1, TestMemTables.CONCAT);
      int puts = 1 + random.nextInt(12_000);
      for (int i = 0; i < puts; i++) {
        byte[] key = new byte[4];
        Bytes.putInt(key, 0, random.nextInt(3_000));
        byte[] row = {(byte) i, (byte) (i >>> 8)};
        reference.put(key, 4, row, 2);
        for (MemTable t : tables) {
          t.put(key, 4, row, 2);
        }
      }
      for (MemTable t : tables) {
        assertEquals(reference.entryCount(), t.entryCount(), note);
        try (KvIterator want = reference.iterator();
            KvIterator got = t.iterator()) {
          for (want.seekToFirst(), got.seekToFirst(); want.valid(); want.next(), got.next()) {
            assertTrue(got.valid(), note);
            assertArrayEquals(want.key(), got.key(), note);
            assertArrayEquals(want.value(), got.value(), note);
            assertArrayEquals(want.value(), t.get(want.key(), 4), note);
          }
          assertFalse(got.valid(), note);
        }
      }
    }
  }
}
