package io.cobble.memtable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cobble.iterator.KvIterator;
import io.cobble.read.AllocationProbe;
import io.cobble.util.Bytes;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The prefix sort must give exactly the order of a stable sort by {@link Bytes#compare}: keys are
 * drawn to stress the normalized prefix (lengths around 8 and 15, shared prefixes, zero bytes that
 * tie with padding, equal keys whose insertion order must survive).
 */
class SortedRecordsTest {
  private static final byte[] ALPHABET = {0, 0, 0, 1, (byte) 0x7F, (byte) 0x80, (byte) 0xFF};

  @Test
  void ordersLikeStableBytesCompare() {
    ordersLikeStableBytesCompare(SortedRecords.MAX_RADIX_PASSES, false);
  }

  /**
   * The radix sort (forced on for every input) gives the same order, ties of long keys included.
   */
  @Test
  void radixSortOrdersLikeStableBytesCompare() {
    ordersLikeStableBytesCompare(16, false);
  }

  /**
   * Keys like a sink shard's (family, bucket, fixed-width id) vary in few bytes, so the default
   * picks the radix sort; long keys sharing 15-byte prefixes make it settle ties by full keys.
   */
  @Test
  void narrowKeysOrderLikeStableBytesCompare() {
    ordersLikeStableBytesCompare(SortedRecords.MAX_RADIX_PASSES, true);
  }

  private static void ordersLikeStableBytesCompare(int maxRadixPasses, boolean narrow) {
    Random r = new Random(20261130);
    for (int round = 0; round < 300; round++) {
      int count = 1 + r.nextInt(round < 100 ? 40 : 3000);
      byte[][] pool =
          narrow ? narrowKeyPool(r, 1 + r.nextInt(count)) : keyPool(r, 1 + r.nextInt(count));
      Arena arena = new Arena();
      long[] addrs = new long[count + r.nextInt(5)];
      byte[][] keys = new byte[count][];
      for (int i = 0; i < count; i++) {
        keys[i] = pool[r.nextInt(pool.length)];
        byte[] seq = new byte[4];
        Bytes.putInt(seq, 0, i);
        addrs[i] = arena.add(keys[i], keys[i].length, seq, 0, seq.length);
      }
      Integer[] expected = new Integer[count];
      Arrays.setAll(expected, i -> i);
      // Arrays.sort on objects is stable: equal keys keep insertion order.
      Arrays.sort(expected, Comparator.comparing((Integer i) -> keys[i], Bytes::compare));

      long[] packed = SortedRecords.sortPacked(arena, addrs, count, maxRadixPasses);
      long[] sorted = new long[count];
      for (int i = 0; i < count; i++) {
        sorted[i] = packed[i * SortedRecords.STRIDE + 2];
      }

      assertEquals(count, sorted.length);
      for (int i = 0; i < count; i++) {
        assertEquals(
            (int) expected[i],
            Bytes.getInt(arena.value(sorted[i]), 0),
            "round " + round + ", position " + i);
      }
    }
  }

  /**
   * Keys of one shape (like a Flink map state's: bucket, key, namespace, user key) that differ in
   * few byte positions, some past the first 15, with lengths that differ by zero bytes at the end:
   * they must take the varying-bytes packing, sort exactly like a stable lexicographic sort, and
   * compare equal exactly when the keys are equal, without ever tying on the packed words.
   */
  @Test
  void fewVaryingBytesSortAndCompareExactly() {
    Random r = new Random(20261202);
    for (int round = 0; round < 300; round++) {
      int count = 2 + r.nextInt(round < 100 ? 40 : 4000);
      byte[][] pool = fewVaryingPool(r, 1 + r.nextInt(count));
      Arena arena = new Arena();
      byte[][] keys = new byte[count][];
      long[] addrs = addRecords(r, arena, pool, keys);
      assertTrue(
          SortedRecords.packVaryingBytes(arena, addrs, count, new long[count * 3]),
          "round " + round + " should pack its keys' varying bytes");
      long[] packed = sortAndCheck(r, arena, addrs, keys, count, round);
      for (int i = 0; i < count; i++) {
        // Keys that tie on packed words of this form would be compared in the arena.
        assertTrue((packed[i * SortedRecords.STRIDE + 1] & 0xFF) < Arena.NORMALIZED_BYTES);
      }
      for (int i = 1; i < count; i++) {
        byte[] prev = keys[insertedAt(arena, packed, i - 1)];
        byte[] cur = keys[insertedAt(arena, packed, i)];
        int got =
            SortedRecords.compare(
                arena, packed, (i - 1) * SortedRecords.STRIDE, packed, i * SortedRecords.STRIDE);
        assertEquals(
            Integer.signum(lexicographic(prev, cur)),
            Integer.signum(got),
            "round " + round + ": " + Arrays.toString(prev) + " vs " + Arrays.toString(cur));
      }
    }
  }

  /**
   * Sorts run on spare arrays that earlier sorts released, holding their stale records or garbage
   * (of random sizes, longer than needed too), and still order exactly like a stable sort: both the
   * radix sort and the merge sort, with keys packed by their varying bytes or not.
   */
  @Test
  void sortsOnReleasedSparesOrderLikeAStableSort() {
    Random r = new Random(20261203);
    for (int round = 0; round < 60; round++) {
      long[] garbage = new long[4096 + r.nextInt(30_000)];
      for (int i = 0; i < garbage.length; i++) {
        garbage[i] = r.nextLong();
      }
      SortedRecords.release(garbage);
      int count = 1400 + r.nextInt(6000);
      byte[][] pool =
          r.nextBoolean()
              ? fewVaryingPool(r, 1 + r.nextInt(count))
              : keyPool(r, 1 + r.nextInt(count));
      Arena arena = new Arena();
      byte[][] keys = new byte[count][];
      long[] addrs = addRecords(r, arena, pool, keys);
      long[] packed = sortAndCheck(r, arena, addrs, keys, count, round);
      SortedRecords.release(packed);
    }
  }

  /**
   * A sort of as many records as the last one takes its arrays from the spares that sort released:
   * it allocates far less than one packed array (24 bytes per record) where it used to allocate
   * two.
   */
  @Test
  void aRepeatedSortAllocatesNoSortArrays() {
    Random r = new Random(5);
    int count = 200_000;
    Arena arena = new Arena();
    long[] addrs = new long[count];
    for (int i = 0; i < count; i++) {
      byte[] key = new byte[25];
      Bytes.putInt(key, 8, r.nextInt(50_000));
      key[24] = (byte) r.nextInt(10);
      addrs[i] = arena.add(key, key.length, new byte[] {1}, 0, 1);
    }
    for (int passes : new int[] {SortedRecords.MAX_RADIX_PASSES, 0}) {
      long allocated =
          AllocationProbe.allocatedBy(
              () -> SortedRecords.release(SortedRecords.sortPacked(arena, addrs, count, passes)));
      assertTrue(
          allocated < count,
          (passes == 0 ? "merge" : "radix") + " sort allocated " + allocated + " bytes");
    }
  }

  /**
   * Keys of a Flink map state (family, two-byte bucket, eight-byte key, eight-byte user key) vary
   * in a few bytes, which fit one long beside a record's index: they sort on one word per record,
   * in exactly the order of a stable sort, duplicates in insertion order. Some rounds leave bytes
   * inside the varying span constant (a pass that has nothing to move) and some draw counts at the
   * boundary where the index bits just fit or just do not.
   */
  @Test
  void narrowSpansSortOnOneWordLikeAStableSort() {
    Random r = new Random(20261207);
    for (int round = 0; round < 40; round++) {
      int keyCount = 1 + r.nextInt(round % 4 == 0 ? 70_000 : 3_000);
      int userKeys = 1 + r.nextInt(12);
      byte[][] pool = new byte[keyCount * userKeys][];
      boolean gaps = r.nextBoolean();
      for (int k = 0; k < keyCount; k++) {
        for (int u = 0; u < userKeys; u++) {
          byte[] key = new byte[19];
          key[0] = 7;
          key[2] = (byte) r.nextInt(2);
          Bytes.putLong(key, 3, gaps ? (long) r.nextInt(256) << 16 | k & 0xFF : k);
          Bytes.putLong(key, 11, u);
          pool[k * userKeys + u] = key;
        }
      }
      int count =
          round % 4 == 0 ? (r.nextBoolean() ? 1 << 16 : (1 << 16) + 1) : 17 + r.nextInt(6000);
      Arena arena = new Arena();
      byte[][] keys = new byte[count][];
      long[] addrs = addRecords(r, arena, pool, keys);
      long[] packed = SortedRecords.sortPacked(arena, addrs, count);
      assertStableOrder(arena, keys, packed, count, round);
      SortedRecords.release(packed);
    }
  }

  /**
   * A shape gathered over more keys than those sorted (varying in more positions) packs them just
   * as exactly: the order of a stable sort, with keys of one shape whose lengths may differ.
   */
  @Test
  void aShapeOverMoreKeysSortsExactly() {
    Random r = new Random(20261209);
    for (int round = 0; round < 100; round++) {
      int count = 2 + r.nextInt(round < 30 ? 40 : 4000);
      byte[][] pool = fewVaryingPool(r, 1 + r.nextInt(count));
      Arena arena = new Arena();
      byte[][] keys = new byte[count][];
      long[] addrs = addRecords(r, arena, pool, keys);
      KeyShape shape = new KeyShape();
      for (byte[] k : pool) {
        shape.add(k, 0, k.length);
      }
      long[] packed = SortedRecords.sortPacked(arena, addrs, count, shape);
      assertStableOrder(arena, keys, packed, count, round);
      SortedRecords.release(packed);
    }
  }

  /**
   * A vec memtable's writer gathers its keys' shape as it appends, from a reused buffer longer than
   * the key with stale bytes after it; once sealed, the flush's sort uses that shape and reads the
   * rows of a sorted-map model, in its order, for keys of one shape (which pack) and of any shape.
   */
  @Test
  void aSealedVecMemTableSortsOnTheShapeItsWriterGathered() {
    Random r = new Random(20261208);
    for (int round = 0; round < 80; round++) {
      int size = 1 + r.nextInt(round < 20 ? 30 : 3000);
      byte[][] pool = round % 3 == 0 ? keyPool(r, size) : fewVaryingPool(r, size);
      VecMemTable m = new VecMemTable(1, (key, older, newer) -> newer);
      TreeMap<byte[], byte[]> model = new TreeMap<>(Bytes::compare);
      byte[] buffer = new byte[KeyShape.MAX_WORDS * 8 + 16];
      int puts = 1 + r.nextInt(round < 20 ? 60 : 6000);
      for (int i = 0; i < puts; i++) {
        byte[] k = pool[r.nextInt(pool.length)];
        r.nextBytes(buffer);
        System.arraycopy(k, 0, buffer, 0, k.length);
        byte[] v = new byte[4];
        Bytes.putInt(v, 0, i);
        m.put(buffer, k.length, v, v.length);
        model.put(k, v);
      }
      m.seal();
      KvIterator it = m.iterator();
      it.seekToFirst();
      for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
        assertArrayEquals(e.getKey(), it.key(), "round " + round);
        assertArrayEquals(e.getValue(), it.value(), "round " + round);
        it.next();
      }
      assertFalse(it.valid());
    }
  }

  /** The one-word sort takes varying bytes of the first word whose span fits beside the index. */
  @Test
  void oneWordFitsOnlyFirstWordSpansBesideTheIndex() {
    assertTrue(SortedRecords.fitsOneWord(new int[] {0, 1, 2, 3, 4}, 1 << 20));
    assertTrue(SortedRecords.fitsOneWord(new int[] {2, 7}, 1 << 16));
    assertFalse(SortedRecords.fitsOneWord(new int[] {2, 7}, (1 << 16) + 1));
    assertFalse(SortedRecords.fitsOneWord(new int[] {3, 8}, 100));
    assertFalse(SortedRecords.fitsOneWord(new int[0], 100));
  }

  /** Keys longer than the scanned words, or varying in too many positions, are not packed. */
  @Test
  void manyVaryingBytesOrLongKeysAreNotPacked() {
    Arena arena = new Arena();
    long[] addrs = new long[40];
    for (int i = 0; i < 20; i++) {
      byte[] k = new byte[20];
      k[i] = 1;
      addrs[i] = arena.add(k, k.length, Bytes.EMPTY, 0, 0);
    }
    assertFalse(SortedRecords.packVaryingBytes(arena, addrs, 20, new long[60]));
    Arena longKeys = new Arena();
    for (int i = 0; i < 2; i++) {
      byte[] k = new byte[KeyShape.MAX_WORDS * 8 + 1];
      k[0] = (byte) i;
      addrs[i] = longKeys.add(k, k.length, Bytes.EMPTY, 0, 0);
    }
    assertFalse(SortedRecords.packVaryingBytes(longKeys, addrs, 2, new long[6]));
  }

  /**
   * Adds one record per slot of {@code keys}, each with a key drawn from {@code pool} (stored in
   * {@code keys}) and its insertion index as value; returns their addresses.
   */
  private static long[] addRecords(Random r, Arena arena, byte[][] pool, byte[][] keys) {
    long[] addrs = new long[keys.length];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = pool[r.nextInt(pool.length)];
      byte[] seq = new byte[4];
      Bytes.putInt(seq, 0, i);
      addrs[i] = arena.add(keys[i], keys[i].length, seq, 0, seq.length);
    }
    return addrs;
  }

  /**
   * Sorts the records (radix passes or none, at random) and checks the order against a stable sort
   * of their keys (each record's value is its insertion index); returns the packed result.
   */
  private static long[] sortAndCheck(
      Random r, Arena arena, long[] addrs, byte[][] keys, int count, int round) {
    int passes = r.nextBoolean() ? SortedRecords.MAX_RADIX_PASSES : 0;
    long[] packed = SortedRecords.sortPacked(arena, addrs, count, passes);
    assertStableOrder(arena, keys, packed, count, round);
    return packed;
  }

  /**
   * Checks that {@code packed} holds the records in the order of a stable sort of their keys (each
   * record's value is its insertion index).
   */
  private static void assertStableOrder(
      Arena arena, byte[][] keys, long[] packed, int count, int round) {
    Integer[] expected = new Integer[count];
    Arrays.setAll(expected, i -> i);
    Arrays.sort(expected, (x, y) -> lexicographic(keys[x], keys[y]));
    for (int i = 0; i < count; i++) {
      assertEquals((int) expected[i], insertedAt(arena, packed, i), "round " + round + ", at " + i);
    }
  }

  /** The insertion index (the value) of the record at sorted position {@code i}. */
  private static int insertedAt(Arena arena, long[] packed, int i) {
    return Bytes.getInt(arena.value(packed[i * SortedRecords.STRIDE + 2]), 0);
  }

  /** Unsigned lexicographic order, shorter first on a shared prefix: the model's comparator. */
  private static int lexicographic(byte[] a, byte[] b) {
    for (int i = 0; i < Math.min(a.length, b.length); i++) {
      int d = (a[i] & 0xFF) - (b[i] & 0xFF);
      if (d != 0) {
        return d;
      }
    }
    return a.length - b.length;
  }

  /**
   * Keys from one template of up to 64 bytes, each differing from it in a few fixed positions
   * (anywhere, often past byte 15) and, in some rounds, shorter by a few bytes (the template ends
   * in zeros then, so a shorter key can equal a longer one's zero-padded form).
   */
  private static byte[][] fewVaryingPool(Random r, int size) {
    int maxLen = 1 + r.nextInt(KeyShape.MAX_WORDS * 8);
    byte[] template = new byte[maxLen];
    for (int j = 0; j < maxLen; j++) {
      template[j] = ALPHABET[r.nextInt(ALPHABET.length)];
    }
    boolean lengthsVary = r.nextBoolean();
    if (lengthsVary) {
      Arrays.fill(template, Math.max(0, maxLen - 3), maxLen, (byte) 0);
    }
    int[] positions = new int[1 + r.nextInt(lengthsVary ? 13 : 14)];
    for (int p = 0; p < positions.length; p++) {
      positions[p] = r.nextInt(maxLen);
    }
    byte[][] pool = new byte[size][];
    for (int i = 0; i < size; i++) {
      byte[] k = template.clone();
      for (int p : positions) {
        k[p] = ALPHABET[r.nextInt(ALPHABET.length)];
      }
      int len = lengthsVary ? Math.max(0, maxLen - r.nextInt(4)) : maxLen;
      pool[i] = Arrays.copyOf(k, len);
    }
    return pool;
  }

  @Test
  void comparesPackedRecordsLikeBytesCompare() {
    Random r = new Random(7);
    byte[][] pool = keyPool(r, 400);
    Arena arena = new Arena();
    long[] addrs = new long[pool.length];
    for (int i = 0; i < pool.length; i++) {
      addrs[i] = arena.add(pool[i], pool[i].length, Bytes.EMPTY, 0, 0);
    }
    long[] packed = new long[pool.length * SortedRecords.STRIDE];
    for (int i = 0; i < pool.length; i++) {
      arena.normalizedKey(addrs[i], packed, i * SortedRecords.STRIDE);
      packed[i * SortedRecords.STRIDE + 2] = addrs[i];
    }
    for (int i = 0; i < pool.length; i++) {
      for (int j = 0; j < pool.length; j++) {
        int got =
            SortedRecords.compare(
                arena, packed, i * SortedRecords.STRIDE, packed, j * SortedRecords.STRIDE);
        assertEquals(
            Integer.signum(Bytes.compare(pool[i], pool[j])),
            Integer.signum(got),
            Arrays.toString(pool[i]) + " vs " + Arrays.toString(pool[j]));
      }
    }
  }

  @Test
  void normalizesKeyEndingAtPageEnd() {
    byte[] key = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, (byte) 0xFF};
    Arena full = new Arena();
    // The first page is 16 KiB: the filler leaves exactly one 23-byte record (8 + 15 + 0).
    full.add(new byte[1], 1, new byte[16384 - 23 - 9], 0, 16384 - 23 - 9);
    long atEnd = full.add(key, key.length, Bytes.EMPTY, 0, 0);
    Arena roomy = new Arena();
    long inside = roomy.add(key, key.length, new byte[8], 0, 8);
    long[] a = new long[2];
    long[] b = new long[2];
    full.normalizedKey(atEnd, a, 0);
    roomy.normalizedKey(inside, b, 0);
    assertArrayEquals(b, a);
    assertEquals(0x0102030405060708L, a[0]);
    assertEquals(0x090A0B0C0D0EFF0FL, a[1]);
  }

  /**
   * A key's last partial word is read as a whole word and masked, so the bytes after the key (here
   * a value of 0xFF bytes) never show; at a page's end, where no whole word fits, it is read byte
   * by byte with the same result.
   */
  @Test
  void keyWordsEndAtTheKeyWithOrWithoutRoomAfterIt() {
    byte[] key = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    Arena full = new Arena();
    // The first page is 16 KiB: the filler leaves exactly one 19-byte record (8 + 11 + 0).
    full.add(new byte[1], 1, new byte[16384 - 19 - 9], 0, 16384 - 19 - 9);
    long atEnd = full.add(key, key.length, Bytes.EMPTY, 0, 0);
    Arena roomy = new Arena();
    byte[] ones = new byte[8];
    Arrays.fill(ones, (byte) 0xFF);
    long inside = roomy.add(key, key.length, ones, 0, ones.length);
    long[] a = new long[3];
    long[] b = new long[3];
    assertEquals(11, full.keyWords(atEnd, a, 0, 3));
    assertEquals(11, roomy.keyWords(inside, b, 0, 3));
    assertArrayEquals(new long[] {0x0102030405060708L, 0x090A0B0000000000L, 0}, a);
    assertArrayEquals(a, b);
  }

  @Test
  void vecMemTableFoldsDuplicatesInWriteOrder() {
    RowCombiner concat =
        (key, older, newer) -> {
          byte[] out = Arrays.copyOf(older, older.length + newer.length);
          System.arraycopy(newer, 0, out, older.length, newer.length);
          return out;
        };
    VecMemTable m = new VecMemTable(1, concat);
    Random r = new Random(3);
    byte[][] pool = keyPool(r, 200);
    TreeMap<byte[], byte[]> model = new TreeMap<>(Bytes::compare);
    for (int i = 0; i < 5000; i++) {
      byte[] k = pool[r.nextInt(pool.length)];
      byte[] v = {(byte) i};
      m.put(k, k.length, v, v.length);
      model.merge(k, v, (a, b) -> concat.combine(k, a, b));
    }
    for (byte[] k : pool) {
      assertArrayEquals(model.get(k), m.get(k, k.length), Arrays.toString(k));
    }
    KvIterator it = m.iterator();
    it.seekToFirst();
    for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
      assertArrayEquals(e.getKey(), it.key());
      assertArrayEquals(e.getValue(), it.value());
      it.next();
    }
    assertFalse(it.valid());
  }

  /**
   * Keys of a shard: a fixed family, one of two buckets and a big-endian id below 4096, either as 8
   * bytes (12-byte keys, whole in the normalized form) or followed by a 20-byte suffix of few
   * values (32-byte keys that tie on their normalized form).
   */
  private static byte[][] narrowKeyPool(Random r, int size) {
    boolean longKeys = r.nextBoolean();
    byte[][] pool = new byte[size][];
    for (int i = 0; i < size; i++) {
      byte[] k = new byte[longKeys ? 32 : 12];
      k[1] = 3;
      k[3] = (byte) r.nextInt(2);
      Bytes.putInt(k, 8, r.nextInt(4096));
      if (longKeys) {
        k[12 + r.nextInt(20)] = ALPHABET[r.nextInt(ALPHABET.length)];
      }
      pool[i] = k;
    }
    return pool;
  }

  /**
   * Distinct-ish keys of 0 to 40 bytes, many near the 8- and 15-byte boundaries, built by extending
   * or truncating earlier keys so long shared prefixes are common.
   */
  private static byte[][] keyPool(Random r, int size) {
    byte[][] pool = new byte[size][];
    int[] lengths = {0, 1, 7, 8, 9, 14, 15, 16, 17, 23, 24, 40};
    for (int i = 0; i < size; i++) {
      int len = r.nextBoolean() ? lengths[r.nextInt(lengths.length)] : r.nextInt(41);
      byte[] k = new byte[len];
      if (i > 0 && r.nextInt(3) > 0) {
        byte[] base = pool[r.nextInt(i)];
        System.arraycopy(base, 0, k, 0, Math.min(len, base.length));
        for (int j = base.length; j < len; j++) {
          k[j] = ALPHABET[r.nextInt(ALPHABET.length)];
        }
        if (len > 0 && r.nextInt(4) == 0) {
          k[r.nextInt(len)] = ALPHABET[r.nextInt(ALPHABET.length)];
        }
      } else {
        for (int j = 0; j < len; j++) {
          k[j] = ALPHABET[r.nextInt(ALPHABET.length)];
        }
      }
      pool[i] = k;
    }
    return pool;
  }
}
