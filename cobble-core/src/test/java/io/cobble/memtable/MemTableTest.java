package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.MemTableType;
import io.cobble.iterator.KvIterator;
import io.cobble.util.Bytes;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class MemTableTest {
  private static void put(MemTable m, byte[] key, int keyLen, byte[] row) {
    m.put(key, keyLen, row, row.length);
  }

  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void matchesSortedMapModel(MemTableType type) {
    MemTable m = TestMemTables.create(type);
    TreeMap<byte[], byte[]> model = new TreeMap<>(Bytes::compare);
    Random r = new Random(42);
    Function<Integer, byte[]> key = i -> ("k" + i).getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < 20_000; i++) {
      byte[] k = key.apply(r.nextInt(3000));
      byte[] v = {(byte) r.nextInt(256)};
      put(m, k, k.length, v);
      model.merge(k, v, (a, b) -> TestMemTables.CONCAT.combine(k, a, b));
      if (i % 1000 == 0) {
        byte[] probe = key.apply(r.nextInt(3000));
        byte[] expect = model.get(probe);
        byte[] got = m.get(probe, probe.length);
        if (expect == null) {
          assertNull(got);
        } else {
          assertArrayEquals(expect, got);
        }
      }
    }
    assertEquals(model.size(), countEntries(m));
    KvIterator it = iteratesAs(m, model);
    byte[] mid = key.apply(1500);
    it.seek(mid);
    assertArrayEquals(model.ceilingKey(mid), it.key());
    assertTrue(m.approximateBytes() > 20_000);
  }

  /**
   * Keys of 0 to 24 bytes over the bytes 0x00, 0x01, 0x7F, 0x80 and 0xFF, many sharing their first
   * 15 bytes or differing only in trailing zeros: every memtable type orders, seeks and gets them
   * as the JDK's unsigned array order says. A skiplist search compares each node's 16-byte
   * normalized key first; a form that dropped the length byte, compared signed, or let a tie on 15
   * bytes decide would misplace some of these keys.
   */
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void keysAroundTheNormalizedLengthSeekAsUnsignedOrder(MemTableType type) {
    byte[] alphabet = {0x00, 0x01, 0x7F, (byte) 0x80, (byte) 0xFF};
    Random r = new Random(7);
    byte[][] stems = new byte[8][];
    for (int i = 0; i < stems.length; i++) {
      stems[i] = new byte[15];
      for (int j = 0; j < 15; j++) {
        stems[i][j] = alphabet[r.nextInt(alphabet.length)];
      }
    }
    Function<Random, byte[]> keys =
        rnd -> {
          byte[] stem = stems[rnd.nextInt(stems.length)];
          byte[] k = Arrays.copyOf(stem, rnd.nextInt(25));
          for (int j = rnd.nextInt(k.length + 1); j < k.length; j++) {
            k[j] = alphabet[rnd.nextInt(alphabet.length)];
          }
          return k;
        };
    MemTable m = TestMemTables.create(type);
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    for (int i = 0; i < 6_000; i++) {
      byte[] k = keys.apply(r);
      byte[] v = {(byte) i};
      put(m, k, k.length, v);
      model.merge(k, v, (a, b) -> TestMemTables.CONCAT.combine(k, a, b));
    }
    KvIterator it = iteratesAs(m, model);
    for (int i = 0; i < 3_000; i++) {
      byte[] target = keys.apply(r);
      byte[] ceiling = model.ceilingKey(target);
      it.seek(target);
      if (ceiling == null) {
        assertFalse(it.valid(), "seek past the last key");
      } else {
        assertArrayEquals(ceiling, it.key(), "seek " + Arrays.toString(target));
      }
      byte[] expect = model.get(target);
      byte[] got = m.get(target, target.length);
      if (expect == null) {
        assertNull(got, "get " + Arrays.toString(target));
      } else {
        assertArrayEquals(expect, got, "get " + Arrays.toString(target));
      }
    }
  }

  /** Asserts that {@code m} iterates exactly the model's rows, in order; returns its iterator. */
  private static KvIterator iteratesAs(MemTable m, TreeMap<byte[], byte[]> model) {
    KvIterator it = m.iterator();
    it.seekToFirst();
    for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
      assertTrue(it.valid());
      assertArrayEquals(e.getKey(), it.key());
      assertArrayEquals(e.getValue(), it.value());
      it.next();
    }
    assertFalse(it.valid());
    return it;
  }

  private static int countEntries(MemTable m) {
    KvIterator it = m.iterator();
    int n = 0;
    for (it.seekToFirst(); it.valid(); it.next()) {
      n++;
    }
    return n;
  }

  @Test
  void adaptiveRulesPickTypeFromOperationMix() {
    assertEquals(MemTableType.SKIPLIST, AdaptiveMemTable.choose(0, 0, 0));
    assertEquals(MemTableType.VEC, AdaptiveMemTable.choose(10_000, 10, 0));
    assertEquals(MemTableType.HASH, AdaptiveMemTable.choose(1000, 200, 0));
    assertEquals(MemTableType.SKIPLIST, AdaptiveMemTable.choose(1000, 200, 20));
    assertEquals(MemTableType.HASH, AdaptiveMemTable.choose(1000, 50, 0));
    assertEquals(MemTableType.HASH, AdaptiveMemTable.choose(10_000, 200, 50));
    assertEquals(MemTableType.VEC, AdaptiveMemTable.choose(10_000, 99, 0));
  }

  @Test
  void adaptiveKeepsItsIndexOnGetsAndConvertsOnFirstScanWithoutLosingData() {
    AdaptiveMemTable m = new AdaptiveMemTable(1, TestMemTables.CONCAT, MemTableType.VEC);
    byte[] k = {1};
    put(m, k, 1, new byte[] {1});
    put(m, k, 1, new byte[] {2});
    assertEquals(MemTableType.VEC, m.currentType());
    assertArrayEquals(new byte[] {1, 2}, m.get(k, 1));
    assertEquals(MemTableType.VEC, m.currentType());
    put(m, k, 1, new byte[] {3});
    assertArrayEquals(new byte[] {1, 2, 3}, m.get(k, 1));
    KvIterator it = m.scanIterator();
    assertEquals(MemTableType.SKIPLIST, m.currentType());
    assertEquals(1, m.conversions());
    it.seekToFirst();
    assertArrayEquals(new byte[] {1, 2, 3}, it.value());
    put(m, k, 1, new byte[] {4});
    assertArrayEquals(new byte[] {1, 2, 3, 4}, m.get(k, 1));
  }

  /**
   * The cause of slow keyed-state reads after a bulk load: a point read after a large write-only
   * phase must neither convert the adaptive memtable nor sort its vec, active or sealed, and still
   * return every key's fold. Asserted on the memtable's own counters, not on time.
   */
  @ParameterizedTest
  @EnumSource(
      value = MemTableType.class,
      names = {"VEC", "ADAPTIVE"})
  void pointReadsAfterAWriteOnlyPhaseSortAndConvertNothing(MemTableType type) {
    MemTable m = TestMemTables.create(type);
    TreeMap<byte[], byte[]> model = new TreeMap<>(Bytes::compare);
    Random r = new Random(11);
    for (int i = 0; i < 200_000; i++) {
      byte[] k = ("key-" + r.nextInt(150_000)).getBytes(StandardCharsets.UTF_8);
      byte[] v = {(byte) i};
      boolean replaces = r.nextInt(4) == 0;
      m.put(k, k.length, v, 1, replaces);
      model.merge(k, v, (a, b) -> replaces ? b : TestMemTables.CONCAT.combine(k, a, b));
    }
    for (int pass = 0; pass < 2; pass++) {
      for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
        byte[] key = e.getKey();
        assertArrayEquals(e.getValue(), m.get(key, key.length));
        byte[][] seen = new byte[1][];
        assertTrue(m.get(key, key.length, (b, o, l) -> seen[0] = Arrays.copyOfRange(b, o, o + l)));
        assertArrayEquals(e.getValue(), seen[0]);
      }
      assertNull(m.get(new byte[] {'x'}, 1));
      VecMemTable vec =
          (VecMemTable) (m instanceof AdaptiveMemTable ? ((AdaptiveMemTable) m).delegate() : m);
      assertEquals(0, vec.sorts(), "a point read sorted the vec memtable");
      if (m instanceof AdaptiveMemTable) {
        assertEquals(MemTableType.VEC, ((AdaptiveMemTable) m).currentType());
        assertEquals(0, ((AdaptiveMemTable) m).conversions(), "a point read converted");
        assertEquals(MemTableType.HASH, ((AdaptiveMemTable) m).nextType());
      }
      m.seal();
    }
    assertEquals(model.size(), countEntries(m));
    VecMemTable vec =
        (VecMemTable) (m instanceof AdaptiveMemTable ? ((AdaptiveMemTable) m).delegate() : m);
    assertEquals(1, vec.sorts(), "only ordered access sorts, once while nothing is appended");
  }

  /**
   * Keys whose 32-bit hashes are equal share a bucket and its head's hash: each get still returns
   * its own key's row, whichever of them was written last, also after the index grew (the hash
   * index checks the head's hash before loading any record, so an equal hash must never be taken
   * for an equal key).
   */
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void keysWithEqualHashesReadTheirOwnRows(MemTableType type) {
    byte[][] pair = equalHashPair();
    MemTable m = TestMemTables.create(type);
    for (int i = 0; i < 3_000; i++) {
      byte[] k = pair[i % 2];
      put(m, k, k.length, new byte[] {(byte) i});
      byte[] filler = ("f" + i).getBytes(StandardCharsets.UTF_8);
      put(m, filler, filler.length, new byte[] {(byte) (i >> 3)});
      if (i == 0) {
        assertNull(m.get(pair[1], pair[1].length), "the other key before its first write");
      }
    }
    byte[] first = m.get(pair[0], pair[0].length);
    byte[] second = m.get(pair[1], pair[1].length);
    assertEquals(1500, first.length, "every delta of the first key, folded");
    assertEquals(1500, second.length, "every delta of the second key, folded");
    for (int j = 0; j < 1500; j++) {
      assertEquals((byte) (2 * j), first[j]);
      assertEquals((byte) (2 * j + 1), second[j]);
    }
    byte[][] seen = new byte[1][];
    assertTrue(
        m.get(
            pair[1],
            pair[1].length,
            (buf, off, len) -> seen[0] = Arrays.copyOfRange(buf, off, off + len)));
    assertArrayEquals(second, seen[0]);
    byte[] never = "never".getBytes(StandardCharsets.UTF_8);
    assertNull(m.get(never, never.length));
  }

  /**
   * Two different keys with the same {@link Bytes#hash}, found by search (a birthday collision).
   */
  private static byte[][] equalHashPair() {
    Map<Integer, Integer> seen = new java.util.HashMap<>();
    for (int i = 0; ; i++) {
      byte[] k = ("c" + i).getBytes(StandardCharsets.UTF_8);
      Integer other = seen.putIfAbsent(Bytes.hash(k, 0, k.length), i);
      if (other != null) {
        byte[] o = ("c" + other).getBytes(StandardCharsets.UTF_8);
        assertFalse(Arrays.equals(o, k));
        return new byte[][] {o, k};
      }
    }
  }

  /**
   * A get that hands the row over in place returns what the copying get returns, for a key given as
   * a prefix of a longer buffer, and is absent exactly when that one is null.
   */
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void inPlaceGetMatchesCopyingGet(MemTableType type) {
    MemTable m = TestMemTables.create(type);
    Random r = new Random(3);
    for (int i = 0; i < 5_000; i++) {
      byte[] k = ("k" + r.nextInt(500)).getBytes(StandardCharsets.UTF_8);
      put(m, k, k.length, new byte[] {(byte) i, (byte) (i >> 8)});
    }
    byte[][] seen = new byte[1][];
    for (int i = 0; i < 600; i++) {
      byte[] k = ("k" + i).getBytes(StandardCharsets.UTF_8);
      byte[] padded = java.util.Arrays.copyOf(k, k.length + 7);
      seen[0] = null;
      boolean found =
          m.get(
              padded,
              k.length,
              (buf, off, len) -> seen[0] = java.util.Arrays.copyOfRange(buf, off, off + len));
      byte[] expected = m.get(k, k.length);
      assertEquals(expected != null, found, "key " + i);
      assertArrayEquals(expected, seen[0], "key " + i);
    }
  }

  @Test
  void adaptiveInPlaceGetsConvertNothingButSteerTheNextType() {
    AdaptiveMemTable m = new AdaptiveMemTable(1, TestMemTables.CONCAT, MemTableType.VEC);
    byte[] k = {1};
    put(m, k, 1, new byte[] {1});
    assertTrue(m.get(k, 1, (buf, off, len) -> {}));
    assertEquals(MemTableType.VEC, m.currentType());
    for (int i = 0; i < 200; i++) {
      m.get(k, 1, (buf, off, len) -> {});
    }
    assertEquals(0, m.conversions());
    assertEquals(MemTableType.HASH, m.nextType());
  }

  /** A scan converts an active hash memtable to a skiplist once, keeping every row. */
  @Test
  void scanConvertsAHashMemtableToASkiplist() {
    AdaptiveMemTable m = new AdaptiveMemTable(1, TestMemTables.CONCAT, MemTableType.HASH);
    for (int i = 0; i < 3000; i++) {
      byte[] k = ("k" + (i % 1000)).getBytes(StandardCharsets.UTF_8);
      put(m, k, k.length, new byte[] {(byte) i});
    }
    KvIterator it = m.scanIterator();
    assertEquals(MemTableType.SKIPLIST, m.currentType());
    int n = 0;
    byte[] prev = null;
    for (it.seekToFirst(); it.valid(); it.next()) {
      assertEquals(3, it.value().length);
      assertTrue(prev == null || Bytes.compare(prev, it.key()) < 0);
      prev = it.key();
      n++;
    }
    assertEquals(1000, n);
    byte[] k = "k5".getBytes(StandardCharsets.UTF_8);
    put(m, k, k.length, new byte[] {9});
    assertArrayEquals(new byte[] {5, (byte) 1005, (byte) 2005, 9}, m.get(k, k.length));
    m.scanIterator();
    assertEquals(1, m.conversions());
  }

  /**
   * Scans of a large write-only memtable read its sorted view, sorted once, instead of converting
   * it; the second scan with no write in between asks the Db to seal it, and each later one asks
   * again while there is no room. A write between scans makes the next scan convert, unsealed.
   * Below the size threshold the first scan converts and the Db is never asked.
   */
  @Test
  void scansOfALargeVecMemtableWhoseWritesStoppedSealIt() {
    int[] asked = new int[1];
    AdaptiveMemTable sealed = filledVec(1000);
    sealed.sealForScans(
        1,
        m -> {
          asked[0]++;
          m.seal();
          return true;
        });
    assertEquals(1000, countRows(sealed.scanIterator()));
    assertEquals(0, asked[0], "the first scan does not know yet whether writes go on");
    assertEquals(1000, countRows(sealed.scanIterator()));
    assertEquals(1, asked[0]);
    assertEquals(0, sealed.conversions());
    assertEquals(1, ((VecMemTable) sealed.delegate()).sorts(), "the sorted view is built once");

    asked[0] = 0;
    AdaptiveMemTable waiting = filledVec(1000);
    waiting.sealForScans(
        1,
        m -> {
          asked[0]++;
          return false;
        });
    for (int scan = 0; scan < 3; scan++) {
      assertEquals(1000, countRows(waiting.scanIterator()));
    }
    assertEquals(2, asked[0], "each scan after the first asks again for room");
    assertEquals(0, waiting.conversions());
    assertEquals(1, ((VecMemTable) waiting.delegate()).sorts());
    byte[] k = "new".getBytes(StandardCharsets.UTF_8);
    put(waiting, k, k.length, new byte[] {1});
    assertEquals(1001, countRows(waiting.scanIterator()));
    assertEquals(2, asked[0]);
    assertEquals(1, waiting.conversions(), "a write made the view stale: converted");
    assertEquals(MemTableType.SKIPLIST, waiting.currentType());

    asked[0] = 0;
    AdaptiveMemTable written = filledVec(1000);
    written.sealForScans(1, m -> ++asked[0] > 0);
    assertEquals(1000, countRows(written.scanIterator()));
    put(written, k, k.length, new byte[] {1});
    assertEquals(1001, countRows(written.scanIterator()));
    assertEquals(0, asked[0], "writes go on: never sealed");
    assertEquals(1, written.conversions());

    AdaptiveMemTable small = filledVec(1000);
    small.sealForScans(1L << 30, m -> ++asked[0] > 0);
    assertEquals(1000, countRows(small.scanIterator()));
    assertEquals(0, asked[0]);
    assertEquals(1, small.conversions());
  }

  private static AdaptiveMemTable filledVec(int rows) {
    AdaptiveMemTable m = new AdaptiveMemTable(1, TestMemTables.CONCAT, MemTableType.VEC);
    for (int i = 0; i < rows; i++) {
      byte[] k = String.format("k%05d", i).getBytes(StandardCharsets.UTF_8);
      put(m, k, k.length, new byte[] {(byte) i});
    }
    return m;
  }

  /** The rows of {@code it} from the first, checked to be in strictly ascending key order. */
  private static int countRows(KvIterator it) {
    int n = 0;
    byte[] prev = null;
    for (it.seekToFirst(); it.valid(); it.next()) {
      assertTrue(prev == null || Bytes.compare(prev, it.key()) < 0);
      prev = it.key();
      n++;
    }
    return n;
  }

  @Test
  void writeOnlyMixStartsNextMemtableAsVec() {
    AdaptiveMemTable m = new AdaptiveMemTable(1, TestMemTables.CONCAT, MemTableType.SKIPLIST);
    for (int i = 0; i < 1000; i++) {
      byte[] k = ("k" + i).getBytes(StandardCharsets.UTF_8);
      put(m, k, k.length, new byte[] {1});
    }
    assertEquals(MemTableType.VEC, m.nextType());
    for (int i = 0; i < 200; i++) {
      m.get(new byte[] {1}, 1);
    }
    assertEquals(MemTableType.HASH, m.nextType());
  }

  /**
   * A delta put as replacing its older ones is stored as is and starts the fold of its key: every
   * type shows the newest replacing delta and what was put after it, never what came before.
   */
  @ParameterizedTest
  @EnumSource(MemTableType.class)
  void replacingDeltaStartsTheFold(MemTableType type) {
    MemTable m = TestMemTables.create(type);
    byte[] k = {7};
    m.put(k, 1, new byte[] {1}, 1, false);
    m.put(k, 1, new byte[] {2}, 1, false);
    m.put(k, 1, new byte[] {3}, 1, true);
    m.put(k, 1, new byte[] {4}, 1, false);
    byte[] other = {9};
    m.put(other, 1, new byte[] {5}, 1, false);
    m.put(other, 1, new byte[] {6}, 1, true);
    assertArrayEquals(new byte[] {3, 4}, m.get(k, 1));
    assertArrayEquals(new byte[] {6}, m.get(other, 1));
    KvIterator it = m.iterator();
    it.seekToFirst();
    assertArrayEquals(new byte[] {3, 4}, it.value());
    it.next();
    assertArrayEquals(new byte[] {6}, it.value());
    it.next();
    assertFalse(it.valid());
  }

  /** A scan converts an append-only adaptive memtable to a skiplist keeping replacing deltas. */
  @Test
  void scanConversionKeepsReplacingDeltas() {
    AdaptiveMemTable m = new AdaptiveMemTable(1, TestMemTables.CONCAT, MemTableType.VEC);
    byte[] k = {7};
    m.put(k, 1, new byte[] {1}, 1, false);
    m.put(k, 1, new byte[] {2}, 1, true);
    m.put(k, 1, new byte[] {3}, 1, false);
    KvIterator it = m.scanIterator();
    assertEquals(MemTableType.SKIPLIST, m.currentType());
    it.seekToFirst();
    assertArrayEquals(new byte[] {2, 3}, it.value());
  }

  /** The plain put asks the combiner, so a combiner that says "replaces" skips the fold. */
  @Test
  void plainPutAsksTheCombinerWhetherADeltaReplaces() {
    RowCombiner replacingOnZero =
        new RowCombiner() {
          @Override
          public byte[] combine(byte[] key, byte[] older, byte[] newer) {
            return TestMemTables.CONCAT.combine(key, older, newer);
          }

          @Override
          public boolean replacesOlder(byte[] key, int keyOff, byte[] row, int rowOff, int rowLen) {
            return row[rowOff] == 0;
          }
        };
    MemTable m = new VecMemTable(1, replacingOnZero);
    byte[] k = {1};
    put(m, k, 1, new byte[] {5});
    put(m, k, 1, new byte[] {0});
    put(m, k, 1, new byte[] {6});
    assertArrayEquals(new byte[] {0, 6}, m.get(k, 1));
  }
}
