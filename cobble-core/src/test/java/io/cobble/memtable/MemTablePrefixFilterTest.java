package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.MemTableType;
import io.cobble.util.Bytes;
import java.util.Arrays;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * A memtable's {@link MemTablePrefixFilter} never rules out a range that holds one of its rows, and
 * does rule out families it holds no row of and most one-prefix ranges it holds nothing in. Random
 * keys of three families (one with a 6-byte prefix, one whose prefix length is set only after its
 * first row, one without) go into a real memtable; every query is checked against a sorted set of
 * the keys written. The seed is printed; replay with {@code -Dcobble.memtable-prefix.seed=<seed>}.
 */
class MemTablePrefixFilterTest {
  private static final int PREFIX = 6;

  /** A tree key: two bucket bytes, a 4-byte key, a 2-byte suffix. */
  private static byte[] treeKey(Random random) {
    byte[] k = new byte[2 + 4 + 2];
    k[1] = (byte) random.nextInt(2);
    k[5] = (byte) random.nextInt(200);
    k[6] = (byte) random.nextInt(3);
    k[7] = (byte) random.nextInt(256);
    return k;
  }

  private static byte[] rowKey(int family, byte[] treeKey) {
    byte[] k = new byte[2 + treeKey.length];
    k[0] = (byte) (family >>> 8);
    k[1] = (byte) family;
    System.arraycopy(treeKey, 0, k, 2, treeKey.length);
    return k;
  }

  @Test
  void neverRulesOutARangeWithARowAndRulesOutMostEmptyPrefixes() {
    long seed = Long.getLong("cobble.memtable-prefix.seed", System.nanoTime());
    System.out.println("MemTablePrefixFilterTest seed=" + seed);
    Random random = new Random(seed);
    for (MemTableType type : MemTableType.values()) {
      // Family 1 is filtered, family 2 gets its length only after its first row, 3 has none.
      int[] lengths = {0, PREFIX, 0, 0};
      MemTable m = TestMemTables.create(type);
      MemTablePrefixFilter filter = new MemTablePrefixFilter(4096, f -> lengths[f]);
      m.prefixFilter(filter);
      assertFalse(m.mayHold(1, null, null), type + ": a family with no row yet");
      TreeSet<byte[]> written = new TreeSet<>(Bytes::compare);
      for (int i = 0; i < 1_000; i++) {
        int family = 1 + random.nextInt(3);
        byte[] key = rowKey(family, treeKey(random));
        m.put(key, key.length, new byte[] {1}, 1);
        written.add(key);
        if (i == 10) {
          lengths[2] = PREFIX;
        }
      }
      for (byte[] key : written) {
        int family = ((key[0] & 0xFF) << 8) | (key[1] & 0xFF);
        byte[] lo = Arrays.copyOfRange(key, 2, 2 + PREFIX);
        assertTrue(
            m.mayHold(family, lo, Bytes.successor(lo)),
            "seed=" + seed + " " + type + " family " + family + " ruled out a written prefix");
      }
      int ruledOut = 0;
      int emptyPrefixRanges = 0;
      for (int q = 0; q < 20_000; q++) {
        int family = 1 + random.nextInt(4);
        byte[] lo = treeKey(random);
        byte[] hi;
        int shape = random.nextInt(4);
        if (shape == 0) {
          hi = Bytes.successor(Arrays.copyOf(lo, PREFIX));
        } else if (shape == 1) {
          lo = Arrays.copyOf(lo, PREFIX + random.nextInt(3));
          hi = Bytes.successor(Arrays.copyOf(lo, PREFIX));
        } else if (shape == 2) {
          hi = Bytes.successor(Arrays.copyOf(lo, PREFIX - 1 - random.nextInt(PREFIX - 1)));
        } else {
          hi = random.nextBoolean() ? null : treeKey(random);
          if (hi != null && Bytes.compare(hi, lo) < 0) {
            byte[] t = lo;
            lo = hi;
            hi = t;
          }
        }
        byte[] from = rowKey(family, lo);
        byte[] to = hi == null ? Bytes.successor(rowKey(family, new byte[0])) : rowKey(family, hi);
        boolean holds = holds(written, from, to);
        boolean mayHold = m.mayHold(family, lo, hi);
        if (holds) {
          assertTrue(
              mayHold,
              "seed=" + seed + " " + type + " family " + family + " ruled out a range it holds");
        } else if (shape <= 1 && family == 1 && !holds(written, family, lo, PREFIX)) {
          emptyPrefixRanges++;
          if (!mayHold) {
            ruledOut++;
          }
        }
        if (family == 4) {
          assertFalse(mayHold, type + ": family 4 has no row");
        }
        if (family == 3) {
          assertTrue(mayHold, type + ": family 3 is unfiltered");
        }
      }
      assertTrue(
          ruledOut > emptyPrefixRanges * 9 / 10,
          type + ": ruled out " + ruledOut + " of " + emptyPrefixRanges + " empty prefixes");
    }
  }

  /** Whether a key of {@code [from, to)} was written. */
  private static boolean holds(TreeSet<byte[]> written, byte[] from, byte[] to) {
    byte[] first = written.ceiling(from);
    return first != null && Bytes.compare(first, to) < 0;
  }

  /** Whether a key of {@code family} starting with {@code key}'s first {@code length} bytes was. */
  private static boolean holds(TreeSet<byte[]> written, int family, byte[] key, int length) {
    byte[] prefix = rowKey(family, Arrays.copyOf(key, length));
    return holds(written, prefix, Bytes.successor(prefix));
  }
}
