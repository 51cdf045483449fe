package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
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

  /**
   * A get through the filter ({@link MemTable#get}) answers exactly as the same memtable without
   * one, for written keys, keys of unseen prefixes, keys shorter than the prefix, a family whose
   * length came after its first row and a family with no row.
   */
  @Test
  void pointGetsAnswerAsWithoutTheFilter() {
    long seed = Long.getLong("cobble.memtable-prefix.seed", System.nanoTime());
    System.out.println("MemTablePrefixFilterTest point seed=" + seed);
    Random random = new Random(seed);
    for (MemTableType type : MemTableType.values()) {
      int[] lengths = {0, PREFIX, 0, 0};
      MemTable filtered = TestMemTables.create(type);
      filtered.prefixFilter(new MemTablePrefixFilter(4096, f -> lengths[f]));
      MemTable plain = TestMemTables.create(type);
      for (int i = 0; i < 2_000; i++) {
        byte[] key = randomRowKey(random, 3);
        byte[] row = {(byte) random.nextInt(256)};
        filtered.put(key, key.length, row, 1);
        plain.put(key, key.length, row, 1);
        if (i == 10) {
          lengths[2] = PREFIX;
        }
      }
      byte[][] seen = new byte[1][];
      for (int q = 0; q < 20_000; q++) {
        byte[] key = randomRowKey(random, 4);
        // The key in a longer array: a get reads only its first keyLen bytes.
        byte[] padded = Arrays.copyOf(key, key.length + random.nextInt(3));
        byte[] expected = plain.get(key, key.length);
        String what = "seed=" + seed + " " + type + " key " + Arrays.toString(key);
        assertArrayEquals(expected, filtered.get(padded, key.length), what);
        seen[0] = null;
        boolean found =
            filtered.get(
                padded,
                key.length,
                (buf, off, len) -> seen[0] = Arrays.copyOfRange(buf, off, off + len));
        assertEquals(expected != null, found, what);
        assertArrayEquals(expected, seen[0], what);
      }
    }
  }

  /**
   * A get of a key the filter rules out does not search the memtable: a vec memtable builds its
   * point-read index on the first get that searches it, and gets of a family with no row or of an
   * unseen prefix leave it unbuilt.
   */
  @Test
  void getsOfRuledOutKeysDoNotSearchTheMemTable() {
    int[] lengths = {0, PREFIX};
    VecMemTable m = new VecMemTable(1, TestMemTables.CONCAT);
    m.prefixFilter(new MemTablePrefixFilter(4096, f -> lengths[f]));
    Random random = new Random(7);
    byte[] written = null;
    for (int i = 0; i < 100; i++) {
      written = rowKey(1, treeKey(random));
      m.put(written, written.length, new byte[] {1}, 1);
    }
    assertNull(m.get(rowKey(2, treeKey(random)), 10), "a family with no row");
    int ruledOut = 0;
    for (int q = 0; q < 1_000; q++) {
      byte[] key = rowKey(1, treeKey(random));
      byte[] lo = Arrays.copyOfRange(key, 2, 2 + PREFIX);
      if (!m.mayHold(1, lo, Bytes.successor(lo))) {
        ruledOut++;
        assertFalse(m.get(key, key.length, (buf, off, len) -> {}));
        assertNull(m.get(key, key.length));
      }
    }
    assertTrue(ruledOut > 100, "ruled out only " + ruledOut + " of 1000 random keys");
    assertFalse(m.indexed(), "a get the filter ruled out searched the memtable");
    assertArrayEquals(new byte[] {1}, m.get(written, written.length));
    assertTrue(m.indexed(), "a get of a written key searches");
  }

  /**
   * Rows written in runs that share a prefix, as a map's {@code putAll} writes them (the filter
   * skips a prefix equal to the last one it set): each run's prefix differs from the one before in
   * a single byte (the last one too) or only in its family, and shorter keys or keys in longer
   * arrays come between. Every written prefix is still found by ranges and point gets.
   */
  @Test
  void runsOfOnePrefixRecordEveryPrefix() {
    long seed = Long.getLong("cobble.memtable-prefix.seed", System.nanoTime());
    System.out.println("MemTablePrefixFilterTest runs seed=" + seed);
    Random random = new Random(seed);
    for (MemTableType type : MemTableType.values()) {
      int[] lengths = {0, PREFIX, PREFIX};
      MemTable m = TestMemTables.create(type);
      m.prefixFilter(new MemTablePrefixFilter(1 << 16, f -> lengths[f]));
      TreeSet<byte[]> written = new TreeSet<>(Bytes::compare);
      byte[] prefix = new byte[PREFIX];
      int family = 1;
      for (int run = 0; run < 2_000; run++) {
        if (random.nextInt(4) == 0) {
          family = 3 - family;
        } else {
          prefix[random.nextInt(PREFIX)] ^= (byte) (1 + random.nextInt(255));
        }
        for (int i = 1 + random.nextInt(10); i > 0; i--) {
          byte[] tree = Arrays.copyOf(prefix, PREFIX + random.nextInt(4));
          for (int j = PREFIX; j < tree.length; j++) {
            tree[j] = (byte) random.nextInt(256);
          }
          byte[] key = rowKey(family, tree);
          // A longer array: the filter reads only the first keyLen bytes.
          byte[] padded = Arrays.copyOf(key, key.length + random.nextInt(3));
          m.put(padded, key.length, new byte[] {1}, 1);
          written.add(key);
          if (random.nextInt(8) == 0) {
            byte[] shorter = rowKey(family, Arrays.copyOf(prefix, random.nextInt(PREFIX)));
            m.put(shorter, shorter.length, new byte[] {2}, 1);
          }
        }
      }
      for (byte[] key : written) {
        int f = ((key[0] & 0xFF) << 8) | (key[1] & 0xFF);
        byte[] lo = Arrays.copyOfRange(key, 2, 2 + PREFIX);
        String what = "seed=" + seed + " " + type + " key " + Arrays.toString(key);
        assertTrue(m.mayHold(f, lo, Bytes.successor(lo)), what + ": ruled out its prefix");
        assertNotNull(m.get(key, key.length), what + ": a get missed it");
      }
    }
  }

  /** A row key of one of the families 1..{@code families}; some shorter than the prefix. */
  private static byte[] randomRowKey(Random random, int families) {
    byte[] tree = treeKey(random);
    if (random.nextInt(10) == 0) {
      tree = Arrays.copyOf(tree, random.nextInt(PREFIX));
    }
    return rowKey(1 + random.nextInt(families), tree);
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
