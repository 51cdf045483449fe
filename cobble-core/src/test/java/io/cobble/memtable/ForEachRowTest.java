package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.MemTableType;
import io.cobble.iterator.KvIterator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link MemTable#forEachRow}, the flush's in-place read, hands over exactly the rows {@link
 * MemTable#iterator()} returns, in the same order, on a seeded random workload of whole-row
 * replacements and folded deltas. The seed is printed; {@code -Dcobble.test.seed=N} replays one.
 */
class ForEachRowTest {
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void handsOverWhatTheIteratorReturns(MemTableType type) {
    long seed = Long.getLong("cobble.test.seed", System.nanoTime());
    System.out.println("ForEachRowTest " + type + " seed " + seed);
    Random rnd = new Random(seed);
    MemTable m = TestMemTables.create(type);
    byte[] buf = new byte[64];
    for (int i = 0; i < 20_000; i++) {
      int keyLen = 1 + rnd.nextInt(12);
      // Few distinct keys, so most keys carry older versions: folded or replaced.
      for (int b = 0; b < keyLen; b++) {
        buf[b] = (byte) rnd.nextInt(4);
      }
      byte[] row = new byte[rnd.nextInt(40)];
      rnd.nextBytes(row);
      m.put(buf, keyLen, row, row.length, rnd.nextInt(3) == 0);
    }
    String note = type + " seed " + seed;
    assertSame(m, note);
    m.seal();
    assertSame(m, note + " sealed");
  }

  private static void assertSame(MemTable m, String note) {
    List<byte[]> keys = new ArrayList<>();
    List<byte[]> rows = new ArrayList<>();
    m.forEachRow(
        (key, keyOff, keyLen, row, rowOff, rowLen) -> {
          keys.add(Arrays.copyOfRange(key, keyOff, keyOff + keyLen));
          rows.add(Arrays.copyOfRange(row, rowOff, rowOff + rowLen));
        });
    KvIterator it = m.iterator();
    int n = 0;
    for (it.seekToFirst(); it.valid(); it.next(), n++) {
      assertTrue(n < keys.size(), "forEachRow handed over fewer rows: " + note);
      assertArrayEquals(it.key(), keys.get(n), "key " + n + ": " + note);
      assertArrayEquals(it.value(), rows.get(n), "row " + n + ": " + note);
    }
    assertEquals(n, keys.size(), "rows: " + note);
    assertTrue(n > 1000, "the workload should leave many keys: " + note);
  }
}
